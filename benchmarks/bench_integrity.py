"""Print the degenerate-submission detectors' statistics on their tuning set (and time them at scale).

Run: ``.venv/bin/python benchmarks/bench_integrity.py``. Nothing is asserted.

Table 1 (tuning data, ``tests/fixtures/integrity/tuning.jsonl``): for each submission of the corpus,
the per-response statistics the thresholds of
:class:`mirage_bench.leaderboard.integrity.Thresholds` cut on
(highest masked-shingle Jaccard with another persona, fact coverage, word count) as min / max, and the
share of responses each detector marks. The thresholds sit between the ordinary submission's maxima
and the degenerate submissions' minima. The held-out set is not printed here: ``tests/test_integrity.py``
checks the thresholds on it.

Table 3: the best other-persona Jaccard computed two ways side by side (sparse binary shingle matrix
product vs pairwise Python set intersections), checked equal.

Table 2: time of :func:`mirage_bench.leaderboard.integrity.analyze` on a full-size 900-response
submission
(150 personas x 6 tasks, the tuning set's ordinary responses cycled with a persona-specific suffix).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mirage_bench.leaderboard import integrity  # noqa: E402
from tests.integrity_corpus import submissions  # noqa: E402


def main() -> None:
    console = Console(width=140)
    t = integrity.DEFAULT_THRESHOLDS
    table = Table(title=f"Tuning set: per-response statistics (thresholds: Jaccard ≥ {t.duplicate_jaccard}, "
                  f"coverage ≥ {t.fact_coverage}, words < {t.near_empty_words})")
    for col in ("submission", "n", "Jaccard min–max", "coverage min–max", "words min–max", "flags"):
        table.add_column(col)
    for name, recs in submissions("tuning").items():
        report = integrity.analyze(recs)
        stats = report.per_response
        best, cover, n_words = (np.array(stats[k]) for k in ("best_jaccard", "fact_coverage", "words"))
        table.add_row(
            name, str(len(recs)), f"{best.min():.2f}–{best.max():.2f}",
            f"{cover.min():.2f}–{cover.max():.2f}",
            f"{n_words.min():.0f}–{n_words.max():.0f}",
            ", ".join(f.split(":")[0] for f in report.flags) or "-",
        )
    console.print(table)

    from mirage_bench.personas import load_personas
    from mirage_bench.tasks import TASK_IDS

    ordinary = submissions("tuning")["ordinary"]
    full = [
        {"persona_id": p.persona_id, "task_id": task,
         "response": ordinary[(i * 6 + j) % len(ordinary)]["response"] + f" ({p.persona_id})"}
        for i, p in enumerate(load_personas()) for j, task in enumerate(TASK_IDS)
    ]
    start = time.perf_counter()
    report = integrity.analyze(full)
    elapsed = time.perf_counter() - start
    timing = Table(title="analyze() on a 900-response submission")
    timing.add_column("responses")
    timing.add_column("seconds")
    timing.add_column("flags (recycled texts: near_duplicate expected)")
    timing.add_row(str(len(full)), f"{elapsed:.2f}", ", ".join(f.split(":")[0] for f in report.flags) or "-")
    console.print(timing)

    # side by side: the per-task best other-persona Jaccard, sparse product vs pairwise Python sets
    tasks: dict[str, list[int]] = {}
    for i, r in enumerate(full):
        tasks.setdefault(r["task_id"], []).append(i)
    sets = [integrity._shingles(integrity.words(r["response"])) for r in full]
    start = time.perf_counter()
    fast = {t: integrity.max_other_jaccard([sets[i] for i in idx], [full[i]["persona_id"] for i in idx])
            for t, idx in tasks.items()}
    t_fast = time.perf_counter() - start
    start = time.perf_counter()
    slow = {}
    for t, idx in tasks.items():
        frozen = [set(sets[i]) for i in idx]
        best = []
        for a, sa in enumerate(frozen):
            others = (len(sa & sb) / len(sa | sb) for b, sb in enumerate(frozen) if b != a)
            best.append(max(others, default=0.0))
        slow[t] = np.array(best)
    t_slow = time.perf_counter() - start
    same = all(np.allclose(fast[t], slow[t], atol=1e-6) for t in tasks)
    side = Table(title="Best other-persona Jaccard for 900 responses (6 tasks x 150 personas)")
    for col in ("implementation", "seconds", "ratio", "same values"):
        side.add_column(col)
    side.add_row("sparse shingle matrix (integrity.max_other_jaccard)", f"{t_fast:.3f}", "1.0x", str(same))
    side.add_row("pairwise Python set intersections", f"{t_slow:.3f}", f"{t_slow / t_fast:.1f}x", str(same))
    console.print(side)


if __name__ == "__main__":
    main()
