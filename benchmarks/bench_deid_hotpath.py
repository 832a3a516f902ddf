"""Side by side: the de-identifier's hot path with the spaCy recognizer, on the nine tuning corpora.

spaCy's ``Doc.text`` joins every token anew on each read, so reading it once per entity (as
``SpacyRecognizer`` did before it kept one copy per document) costs a pass over the whole text per
entity. This prints, as one table, the seconds and the ratio of:

* ``Doc.text per entity``: one read of ``Doc.text`` per entity of every document (the old cost);
* ``Doc.text per doc``: one read per document (what ``SpacyRecognizer`` does now);

on the nine corpora's texts (short: the saving is small there) and on one invented lowercase
memory of about 3,000 words (long: the saving grows with length times entities), then the seconds
of the recognizer itself and of ``deidentify_records`` on the nine corpora and on that memory.
Timings vary with the machine's load: compare the ratios, not the seconds.

    PYTHONPATH=. python benchmarks/bench_deid_hotpath.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timings import print_timings  # noqa: E402

from dataset_builder.deidentify import deidentify_records, texts_of  # noqa: E402
from dataset_builder.detectors import SpacyRecognizer, emoji_as_stops  # noqa: E402
from dataset_builder.pii_eval import load_planted_corpus  # noqa: E402

CORPORA = (
    "deid_heldout6_memories.jsonl",
    "deid_heldout5_memories.jsonl",
    "deid_heldout3_memories.jsonl",
    "deid_heldout4_memories.jsonl",
    "deid_heldout_memories.jsonl",
    "deid_heldout2_memories.jsonl",
    "deid_tuning_memories.jsonl",
    "planted_pii_corpus.jsonl",
    "planted_pii_heldout.jsonl",
)
#: Invented lowercase sentences, repeated into one long memory (no corpus's words).
_SENTENCES = (
    "my sister odile moved to varnsby last spring and works nights at the harbour bakery.",
    "we drove from kelmore to see her on the 3rd of june, the kids slept the whole way.",
    "her partner tomasz fixes bikes in a shed behind the flat on brennick road.",
    "i told odile the school in varnsby has a long waiting list but she did not mind.",
    "the doctor at the corner clinic said my knee needs rest, so no running until autumn.",
)


def _seconds(run: object, repeat: int = 2) -> float:
    """The best of ``repeat`` timings of the call ``run()``."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    """Load the recognizer, time each step and print the table."""
    folder = ROOT / "tests" / "fixtures" / "dataset"
    corpora = [load_planted_corpus(folder / name).records for name in CORPORA]
    recognizer = SpacyRecognizer().load()
    texts = list(dict.fromkeys(text for records in corpora for r in records for _, text in texts_of(r)))
    memory = ""
    while len(memory.split()) < 3000:
        memory = " ".join(filter(None, (memory, *_SENTENCES)))
    words = len(memory.split())
    rows: list[tuple[str, float, str]] = []
    for label, batch in (("nine corpora", texts), ("long memory", [memory])):
        docs = list(
            recognizer._nlp.pipe([emoji_as_stops(t) for t in batch], batch_size=recognizer.batch_size)
        )
        entities = sum(len(doc.ents) for doc in docs)

        def per_entity(docs: list = docs) -> None:
            for doc in docs:
                for _ in doc.ents:
                    _ = doc.text

        def per_doc(docs: list = docs) -> None:
            for doc in docs:
                _ = doc.text

        old, new = _seconds(per_entity), _seconds(per_doc)
        rows.append((f"Doc.text per entity, {label}", old, f"{len(docs)} docs, {entities} entities"))
        rows.append((f"Doc.text per doc, {label}", new, f"ratio {old / new:.1f}" if new else ""))
    long_record = [corpora[0][0].model_copy(update={"retrieved_memories": [memory]})]
    deidentify_records(corpora[-1], recognizer)  # warm the lexicons and caches
    rows += [
        ("recognizer, nine corpora", _seconds(lambda: recognizer(texts), 1), f"{len(texts)} texts"),
        (
            "deidentify_records, nine corpora",
            _seconds(lambda: [deidentify_records(records, recognizer) for records in corpora], 1),
            f"{sum(len(c) for c in corpora)} records",
        ),
        (
            "deidentify_records, long memory",
            _seconds(lambda: deidentify_records(long_record, recognizer), 1),
            f"one lowercase memory of {words} words",
        ),
    ]
    print_timings(rows)


if __name__ == "__main__":
    main()
