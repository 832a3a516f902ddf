"""Metric cards and the Space card are rendered from ``cards/`` and cannot drift from their templates."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dataset_builder.render_cards import CardRenderError, render_cards, render_template, write_cards
from mirage_bench.metrics.evaluate_common import CITATIONS, METRIC_NAMES
from mirage_bench.paths import cards_dir
from mirage_bench.reported import PAPER_JUDGE, reported_statistic

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def cards():
    return {card.target.relative_to(ROOT).as_posix(): card for card in render_cards()}


def test_checked_in_cards_equal_their_rendered_templates(cards) -> None:
    expected = {f"mirage_bench/metrics/{name}/README.md" for name in METRIC_NAMES} | {"space/README.md"}
    assert set(cards) == expected
    for target, card in cards.items():
        if not card.current:
            diff = "".join(
                difflib.unified_diff(
                    (ROOT / target).read_text(encoding="utf-8").splitlines(True),
                    card.text.splitlines(True),
                    target,
                    f"rendered {card.template.name}",
                )
            )
            pytest.fail(f"{target} differs from its template; run `mirage-bench render-cards`:\n{diff}")


def test_cards_take_their_values_from_one_source(cards) -> None:
    for name in METRIC_NAMES:
        template = (cards_dir() / "metrics" / f"{name}.md").read_text(encoding="utf-8")
        assert "{{ citation }}" in template and "{{ load_path }}" in template  # really a template
        text = cards[f"mirage_bench/metrics/{name}/README.md"].text
        assert f"```bibtex\n{CITATIONS[name]}```" in text
        assert f'evaluate.load("mirage_bench/metrics/{name}")' in text
        assert f'mirage_bench.metrics.load("{name}")' in text  # the documented call, wheel or checkout
        assert "{{" not in text and "{#" not in text
    oi = cards["mirage_bench/metrics/over_inference/README.md"].text
    micro, total = reported_statistic("micro_oi_pct"), int(reported_statistic("total_claims"))
    assert f"micro {micro:.1f} % over {total:,} claims" in oi
    agreement = cards["mirage_bench/metrics/judge_agreement/README.md"].text
    assert "per-class F1 (G / R / S / F) 0.947 / 0.863 / 0.876 / 0.897;" in agreement  # printed precision
    assert "45.0 % for annotators" in cards["mirage_bench/metrics/reward_accuracy/README.md"].text
    space = cards["space/README.md"].text
    pin = re.search(r"^gradio==(\S+)", (ROOT / "space" / "requirements.txt").read_text(), re.MULTILINE)
    assert f"\nsdk_version: {pin.group(1)}\n" in space
    assert f"judge `{PAPER_JUDGE}`" in space


def test_render_refuses_missing_values_and_writes_only_what_changed(tmp_path: Path) -> None:
    template = tmp_path / "t.md"
    template.write_text("OI {{ paper.nope }} %\n")
    with pytest.raises(CardRenderError, match="nope"):
        render_template(template, paper={})
    rendered = render_cards(tmp_path / "root")
    assert not any(card.current for card in rendered)
    assert len(write_cards(rendered)) == len(rendered) == 4
    assert write_cards(rendered) == []  # nothing left to write
    target = rendered[0].target
    target.write_text(target.read_text() + "hand edit\n")
    assert not rendered[0].current and write_cards(rendered) == [target]


def test_render_cards_cli(tmp_path: Path) -> None:
    from mirage_bench.cli import app

    root = str(tmp_path / "root")
    check = CliRunner().invoke(app, ["render-cards", "--check", "--root", root])
    assert check.exit_code == 1 and "DIFFERS" in check.output
    written = CliRunner().invoke(app, ["render-cards", "--root", root])
    assert written.exit_code == 0 and written.output.count("wrote") == 4
    again = CliRunner().invoke(app, ["render-cards", "--check", "--root", root])
    assert again.exit_code == 0 and "DIFFERS" not in again.output
    assert CliRunner().invoke(app, ["render-cards", "--check"]).exit_code == 0  # this checkout is current
