"""Time prompt loading and rendering, side by side with naive alternatives, and print a table.

Run: ``.venv/bin/python benchmarks/bench_prompts.py``. Nothing here is asserted; the numbers go
into docs/prompts.md with the command that produced them.

Rows (all rendering the G.2 ``judge_user`` template with a ~3 KB response, per call):
- ``render()``: this package's strict renderer (stat + cached parse + checks + single-pass sub);
- ``load_template() (cached)``: the loader alone;
- ``str.replace chain``: four ``str.replace`` calls on the already-loaded text (no checks, multi-pass);
- ``jinja2 Template.render``: a pre-compiled jinja2 template of the same text (``{{ name }}``).
"""

from __future__ import annotations

import statistics
import timeit

import jinja2

from mirage_bench.prompts import load_template, render

VALUES = {
    "revealed_facts": "1. I work as a software engineer.\n2. I climb.\n3. My cat Pixel spilled my coffee.",
    "task": "Describe what you think my apartment/home looks like.",
    "ground_truth": "\n".join(f"{k}: value of {k}" for k in ("name", "age", "occupation", "city", "pet") * 3),
    "response": "Your apartment is probably a bright, modern space. " * 60,
}


def _time(fn: object, number: int = 2000, repeat: int = 5) -> float:
    """Median microseconds per call."""
    runs = timeit.repeat(fn, number=number, repeat=repeat)  # type: ignore[arg-type]
    return statistics.median(runs) / number * 1e6


def main() -> None:
    """Print the table."""
    text = load_template("judge_user").text
    compiled = jinja2.Environment(autoescape=False).from_string(text)

    def replace_chain() -> str:
        out = text
        for key, value in VALUES.items():
            out = out.replace("{{" + key + "}}", value)
        return out

    assert replace_chain() == render("judge_user", **VALUES).text == compiled.render(**VALUES)
    rows = [
        ("render()", _time(lambda: render("judge_user", **VALUES))),
        ("load_template() (cached)", _time(lambda: load_template("judge_user"))),
        ("str.replace chain", _time(replace_chain)),
        ("jinja2 Template.render", _time(lambda: compiled.render(**VALUES))),
    ]
    base = rows[0][1]
    print(f"{'method':<28}{'us/call':>10}{'vs render()':>14}")
    for name, us in rows:
        print(f"{name:<28}{us:>10.1f}{us / base:>13.2f}x")
    print(f"(judge_user with a {len(VALUES['response'])}-character response; median of 5 x 2000 calls)")


if __name__ == "__main__":
    main()
