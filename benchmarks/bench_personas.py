"""Measure the personas module: load/validate timings and the occupation heuristic's specificity.

Run: ``.venv/bin/python benchmarks/bench_personas.py``. Prints two tables; nothing is asserted.

* Timings: parsing the JSONL cold, a cached ``load_personas()`` (returns deep copies), and a full
  ``validate_personas()`` run, each the median of several repetitions, measured side by side.
* Heuristic: :func:`occupation_revealed` on every persona's own facts (sensitivity on the shipped
  data) and on every *other* persona's facts (149 x 150 mismatched pairs; the share flagged as
  "revealed" there is the heuristic's false-positive rate on this data).
"""

from __future__ import annotations

import statistics
import time

from rich.console import Console
from rich.table import Table

from mirage_bench.personas import (
    DEFAULT_PERSONAS_PATH,
    load_personas,
    occupation_revealed,
    read_personas_file,
    validate_personas,
)


def _median_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    """Print the timing and heuristic tables."""
    console = Console()
    load_personas()  # warm the cache
    personas = load_personas()
    rows = [
        (
            "read_personas_file (parse + pydantic, cold)",
            _median_ms(lambda: read_personas_file(DEFAULT_PERSONAS_PATH), 20),
        ),
        ("load_personas() (cached, returns copies)", _median_ms(load_personas, 20)),
        (
            "same copies via model_copy(deep=True), for comparison",
            _median_ms(lambda: [p.model_copy(deep=True) for p in personas], 20),
        ),
        ("validate_personas(150 personas)", _median_ms(lambda: validate_personas(personas), 20)),
    ]
    table = Table(title="personas: timings (median of 20 runs)")
    table.add_column("operation")
    table.add_column("ms", justify="right")
    for name, ms in rows:
        table.add_row(name, f"{ms:.2f}")
    console.print(table)

    own = sum(occupation_revealed(p.ground_truth["occupation"], p.revealed_facts) for p in personas)
    mismatched = [
        occupation_revealed(p.ground_truth["occupation"], q.revealed_facts)
        for p in personas
        for q in personas
        if p.persona_id != q.persona_id and p.ground_truth["occupation"] != q.ground_truth["occupation"]
    ]
    heur = Table(title="occupation_revealed heuristic on the shipped personas")
    heur.add_column("pairing")
    heur.add_column("pairs", justify="right")
    heur.add_column("flagged revealed", justify="right")
    heur.add_column("rate", justify="right")
    heur.add_row("own facts (sensitivity)", str(len(personas)), str(own), f"{own / len(personas):.1%}")
    heur.add_row(
        "another persona's facts, different occupation (false positives)",
        str(len(mismatched)),
        str(sum(mismatched)),
        f"{sum(mismatched) / len(mismatched):.1%}",
    )
    console.print(heur)


if __name__ == "__main__":
    main()
