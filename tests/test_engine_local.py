"""End to end with the embedded ``local`` smoke-test model: 2 personas x 2 tasks, Task + Judge.

Slow (the model loads in ~50 s and generates ~9 tok/s on 2 cores): token limits are kept small.
The base model's judgments are meaningless; what is tested is that the real local path runs end
to end, that every failure is recorded rather than raised, and that everything is flagged
``smoke_test``.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mirage_bench.cli import app
from mirage_bench.runs import RunDir
from tests.local_model import LOCAL_MODEL_MARKS

pytestmark = LOCAL_MODEL_MARKS


def test_local_smoke_run(tmp_path: Path) -> None:
    out = tmp_path / "local"
    args = [
        "run",
        "--model",
        "local",
        "--judge",
        "local",
        "--personas",
        "2",
        "--tasks",
        "apartment,birthday_gift",
        "--stages",
        "task,judge",
        "--max-tokens",
        "48",
        "--audit-max-tokens",
        "48",
        "--judge-max-tokens",
        "64",
        "--parse-attempts",
        "1",
        "--concurrency",
        "1",
        "--out",
        str(out),
        "--no-progress",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["smoke_test"] is True
    responses = RunDir(out).read("responses")
    judgments = RunDir(out).read("judgments")
    assert len(responses) == 4 and all(r.smoke_test for r in responses)
    assert all(r.status == "ok" and r.response for r in responses)
    assert len(judgments) == 4 and all(j.smoke_test for j in judgments)
    assert all(j.status in ("ok", "parse_failure") for j in judgments)
    assert all(j.status == "ok" or j.error for j in judgments)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["smoke_test"] is True
    assert (out / "claims.parquet").exists()
    assert "SMOKE TEST" in result.output
