"""Where the tests find the seed papers (the specification) without naming a path of one machine.

``$MIRAGE_BENCH_SEEDS_DIR`` first, then a ``shared/seeds/`` folder in the checkout or in a folder
above it (how the project's workspace lays them out). Tests that compare with the full seed text
skip, naming the variable, when neither is there; the verbatim excerpts under ``tests/fixtures/``
stand in for the seed everywhere else.
"""

from __future__ import annotations

import os
from pathlib import Path

#: Environment variable naming the folder that holds the seed ``*.txt`` files.
SEEDS_ENV = "MIRAGE_BENCH_SEEDS_DIR"
#: The MirageBench paper and the memory-aware reward-modeling paper.
PAPER_000 = "000_486715025b63fedc.txt"
PAPER_003 = "003_344050d644d0732c.txt"
#: The six task ids in the order App. G.1 of the MirageBench paper prints their prompts.
G1_TASK_ORDER = (
    "dating_profile", "weekend_itinerary", "rec_letter", "birthday_gift", "apartment", "stress_source"
)
#: Skip reason for tests that need the full seed text.
SKIP_REASON = f"seed paper not found: set {SEEDS_ENV} to the folder holding the seed *.txt files"


def seed_path(name: str = PAPER_000) -> Path | None:
    """The seed file ``name``, or ``None`` when no candidate folder holds it."""
    root = Path(__file__).resolve().parents[1]
    candidates = [Path(os.environ[SEEDS_ENV])] if os.environ.get(SEEDS_ENV) else []
    candidates += [folder / "shared" / "seeds" for folder in (root, *root.parents)]
    for folder in candidates:
        if (folder / name).is_file():
            return folder / name
    return None
