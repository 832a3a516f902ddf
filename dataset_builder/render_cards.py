"""Render the metric cards and the Space card from their templates in ``cards/``.

=================================  ==============================================
template                           rendered into (relative to the project root)
=================================  ==============================================
``cards/metrics/<name>.md``        ``mirage_bench/metrics/<name>/README.md``
``cards/space_card.md``            ``space/README.md``
=================================  ==============================================

(The dataset card, ``cards/dataset_card.md``, is rendered by ``build-dataset`` into each build.)
Templates are Jinja2 with ``StrictUndefined`` (a missing variable is an error, never an empty
string). What they are given comes from one source each, so a card cannot drift from the code:

* metric cards: ``citation`` (:data:`mirage_bench.metrics.evaluate_common.CITATIONS`, the same
  text the metric script's ``MetricInfo`` carries), ``load_path``, and the papers' figures as
  printed (``paper.<statistic>`` from ``reported_statistics.csv``, ``reward.<name>`` from
  ``seed003_reward.csv``; both labelled ``reported`` in those files);
* Space card: ``paper_judge`` (:data:`mirage_bench.reported.PAPER_JUDGE`) and ``gradio_version``
  (the ``gradio==`` pin of ``space/requirements.txt``, which the Space installs).

Each rendered card is parsed with huggingface_hub's ``RepoCard`` / ``SpaceCard`` and its required
metadata checked before anything is written. ``mirage-bench render-cards`` writes them;
``--check`` only compares (exit 1 when a checked-in card differs from its template).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mirage_bench.paths import PACKAGE_DIR

__all__ = ["CardRenderError", "RenderedCard", "render_cards", "render_template", "write_cards"]

#: Metadata each kind of rendered card must carry.
_REQUIRED = {
    "metric": ("title", "description", "tags", "sdk", "sdk_version", "app_file"),  # also an evaluate Space
    "space": ("title", "sdk", "sdk_version", "app_file", "license"),
}


class CardRenderError(ValueError):
    """A template that cannot be rendered into a valid card (the message names the template)."""


@dataclass(frozen=True)
class RenderedCard:
    """One card: its template, the file it is rendered into, and the rendered text."""

    kind: str
    template: Path
    target: Path
    text: str

    @property
    def current(self) -> bool:
        """True when ``target`` exists and holds exactly ``text``."""
        return self.target.is_file() and self.target.read_text(encoding="utf-8") == self.text


def render_template(path: str | Path, **context: Any) -> str:
    """Render the Jinja2 template at ``path`` (trailing newline kept; undefined names raise).

    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     template = pathlib.Path(tmp) / "t.md"
    ...     _ = template.write_text("{# note -#}\\nOI {{ x }} %\\n")
    ...     render_template(template, x="41.8")
    'OI 41.8 %\\n'
    """
    import jinja2

    path = Path(path)
    environment = jinja2.Environment(
        undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False
    )
    try:
        return environment.from_string(path.read_text(encoding="utf-8")).render(**context)
    except jinja2.TemplateError as exc:
        raise CardRenderError(f"{path}: {exc}") from exc


def _paper_statistics() -> dict[str, str]:
    """Seed 000's scalar figures as printed (counts with thousands separators)."""
    import pandas as pd

    from mirage_bench.reported import REPORTED_DIR

    table = pd.read_csv(REPORTED_DIR / "reported_statistics.csv", dtype=str)
    return {
        row.statistic: f"{int(row.value):,}" if row.unit == "count" else row.value
        for row in table.itertuples()
    }


def _reward_statistics() -> dict[str, str]:
    """The seed-003 figures the reward-accuracy card quotes, as printed (percent)."""
    import pandas as pd

    from mirage_bench.reported import REPORTED_DIR

    table = pd.read_csv(REPORTED_DIR / "seed003_reward.csv", dtype=str)
    wanted = {
        "judge_memory_selection": ("memory_selection_rate", "GPT-5.2 direct judge"),
        "skywork_memory_selection": ("memory_selection_rate", "Skywork"),
        "human_memory_rate": ("human_memory_rate", "annotators"),
        "test_retest": ("test_retest_directional_agreement", "annotators"),
    }
    out = {}
    for key, (statistic, evaluator) in wanted.items():
        rows = table[(table.statistic == statistic) & table.evaluator.str.startswith(evaluator)]
        if len(rows) != 1:
            raise CardRenderError(f"seed003_reward.csv: expected one {statistic} row for {evaluator!r}")
        out[key] = rows.value_pct.item()
    return out


def _gradio_pin(requirements: Path) -> str:
    """The version pinned by ``gradio==X`` in a requirements file."""
    text = requirements.read_text(encoding="utf-8") if requirements.is_file() else ""
    match = re.search(r"^gradio==([^\s;#]+)", text, flags=re.MULTILINE)
    if match is None:
        raise CardRenderError(f"{requirements}: no 'gradio==VERSION' pin (the Space card's sdk_version)")
    return match.group(1)


def _check(card: RenderedCard) -> None:
    from huggingface_hub import RepoCard, SpaceCard

    try:
        parsed = (SpaceCard if card.kind == "space" else RepoCard)(card.text)
    except ValueError as exc:
        raise CardRenderError(f"{card.template}: rendered card does not parse: {exc}") from exc
    data = parsed.data.to_dict()
    missing = [key for key in _REQUIRED[card.kind] if not data.get(key)]
    if missing:
        raise CardRenderError(f"{card.template}: rendered card lacks metadata {missing}")


def render_cards(root: str | Path | None = None) -> list[RenderedCard]:
    """Render every metric card and the Space card; targets are under ``root`` (default: project root).

    Raises :class:`CardRenderError` if a template fails to render or a card lacks its metadata.
    """
    from mirage_bench.metrics.evaluate_common import CITATIONS, METRIC_NAMES
    from mirage_bench.paths import cards_dir
    from mirage_bench.reported import PAPER_JUDGE

    root = Path(root) if root is not None else PACKAGE_DIR.parent
    templates = cards_dir()
    paper, reward = _paper_statistics(), _reward_statistics()
    # the pin is read from the package's own requirements file, wherever the cards are written
    gradio = _gradio_pin(PACKAGE_DIR.parent / "space" / "requirements.txt")
    cards = []
    for name in METRIC_NAMES:
        template = templates / "metrics" / f"{name}.md"
        text = render_template(
            template,
            citation=CITATIONS[name],
            load_path=f"mirage_bench/metrics/{name}",
            paper=paper,
            reward=reward,
            gradio_version=gradio,
        )
        target = root / "mirage_bench" / "metrics" / name / "README.md"
        cards.append(RenderedCard("metric", template, target, text))
    template = templates / "space_card.md"
    text = render_template(template, paper_judge=PAPER_JUDGE, gradio_version=gradio)
    cards.append(RenderedCard("space", template, root / "space" / "README.md", text))
    for card in cards:
        _check(card)
    return cards


def write_cards(cards: list[RenderedCard]) -> list[Path]:
    """Write the cards whose target differs (creating folders); returns the paths written."""
    written = []
    for card in cards:
        if not card.current:
            card.target.parent.mkdir(parents=True, exist_ok=True)
            card.target.write_text(card.text, encoding="utf-8")
            written.append(card.target)
    return written
