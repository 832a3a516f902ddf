"""End to end with the embedded ``local`` smoke-test model on the default settings.

The README's quick start: ``mirage-bench run --model local --judge local --personas seed_001 --tasks
birthday_gift`` - Task + self-audit + Judge with SmolLM2-135M-Instruct, JSON decoded under the
schemas. A 135M model's labels mean nothing; what is tested is that the default run finishes, that
its judge output parses into claims (constrained decoding), that every failure is recorded rather
than raised, and that everything is flagged ``smoke_test``. Slow (tens of seconds idle, minutes on
shared cores).
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mirage_bench.cli import app
from mirage_bench.runs import RunDir
from tests.local_model import LOCAL_MODEL_MARKS

pytestmark = LOCAL_MODEL_MARKS


def test_default_local_run_finishes_with_judged_claims(tmp_path: Path) -> None:
    out = tmp_path / "local"
    args = ["run", "--model", "local", "--judge", "local", "--personas", "seed_001", "--tasks",
            "birthday_gift", "--out", str(out), "--no-progress"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["smoke_test"] is True
    assert manifest["settings"]["judge_max_tokens"] == 800  # the local defaults, not 4096
    responses = RunDir(out).read("responses")
    judgments = RunDir(out).read("judgments")
    assert len(responses) == 1 and responses[0].status == "ok" and responses[0].response
    assert responses[0].smoke_test and responses[0].self_audit.status == "ok"
    assert len(judgments) == 1 and judgments[0].smoke_test
    assert judgments[0].status == "ok" and judgments[0].claims, judgments[0].error
    summary = json.loads((out / "summary.json").read_text())
    assert summary["smoke_test"] is True and summary["n_claims"] >= 1
    assert (out / "claims.parquet").exists()
    assert "SMOKE TEST" in result.output
