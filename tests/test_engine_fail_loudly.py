"""``mirage-bench run`` fails loudly, against an OpenAI-compatible server running in its own process.

The server (``tests/openai_server.py``) is started as a separate process and programmed through its
``/_control`` endpoints; the CLI runs as another process, as a user would run it. What is checked:
a refused key stops the run within the first requests with a non-zero exit and one line; a bad
judge key stops it before any model call is spent; malformed 200 bodies are retried; a transient
500 does not change the structured-output mode; the manifest's request counts equal the server's,
also after kill -9; SIGTERM is handled like Ctrl-C; a locked run directory gives one line; too
many failed records exit 1; ``--json`` prints a parseable summary.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


class ServerProcess:
    """``python tests/openai_server.py`` in its own process, with its HTTP controls."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(REPO / "tests" / "openai_server.py"), *args],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        if not line.startswith("PORT "):
            self.proc.kill()
            detail = self.proc.stderr.read() if self.proc.stderr else ""
            raise RuntimeError(f"server did not start: {line!r} {detail}")
        self.port = int(line.split()[1])
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    def control(self, action: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/_control/{action}", data=data,
                                         method="GET" if body is None else "POST",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def stats(self) -> dict[str, Any]:
        return self.control("stats")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@contextmanager
def server_process(*args: str) -> Iterator[ServerProcess]:
    server = ServerProcess(*args)
    try:
        yield server
    finally:
        server.stop()


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "mirage_bench.cli", *args]


def run_args(server: ServerProcess, out: Path, *extra: str, judge_url: str | None = None,
             personas: str = "3", tasks: str = "apartment") -> list[str]:
    judge = f"openai:j@{judge_url or server.base_url}"
    return cli("run", "--model", f"openai:m@{server.base_url}", "--judge", judge, "--personas", personas,
               "--tasks", tasks, "--out", str(out), "--no-progress", *extra)


def env(key: str = "right") -> dict[str, str]:
    return {**os.environ, "OPENAI_API_KEY": key, "HF_HUB_OFFLINE": "1"}


def manifest(out: Path) -> dict[str, Any]:
    return json.loads((out / "manifest.json").read_text())


def sent(out: Path) -> int:
    """Requests the run's manifest says it sent, over both roles."""
    return sum(u["backend_calls"] for u in manifest(out)["usage"].values())


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


def test_a_refused_key_stops_the_run_at_once_with_one_line(tmp_path: Path) -> None:
    with server_process("--api-key", "right") as server:
        out = tmp_path / "run"
        result = subprocess.run(run_args(server, out), env=env("wrong"), capture_output=True, text=True,
                                timeout=120)
        stats = server.stats()
    assert result.returncode == 3, result.stderr
    lines = error_lines(result.stderr)
    assert len(lines) == 1 and "401" in lines[0] and "API key" in lines[0], result.stderr
    assert "Traceback" not in result.stderr
    assert stats["request_count"] <= 2  # the preflight, not 3 instances x 3 calls
    assert manifest(out)["status"] == "failed"
    assert sent(out) == stats["request_count"]


def test_a_bad_judge_key_stops_before_any_model_call(tmp_path: Path) -> None:
    with server_process() as model_server, server_process("--api-key", "judge-only") as judge_server:
        out = tmp_path / "run"
        result = subprocess.run(run_args(model_server, out, judge_url=judge_server.base_url),
                                env=env("wrong"), capture_output=True, text=True, timeout=120)
        model_stats, judge_stats = model_server.stats(), judge_server.stats()
    assert result.returncode == 3 and "judge backend" in result.stderr, result.stderr
    assert model_stats["chat_requests"] == 0
    assert judge_stats["request_count"] == 1


def test_malformed_bodies_are_retried_and_every_request_is_counted(tmp_path: Path) -> None:
    with server_process() as server:
        server.control("malformed", {"count": 4})
        out = tmp_path / "run"
        result = subprocess.run(run_args(server, out, "--json", "--timeout", "10"), env=env(),
                                capture_output=True, text=True, timeout=180)
        stats = server.stats()
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["status"] == "complete" and data["failed_records"]["judge"]["failed"] == 0
    assert data["summary"]["n_judged"] == 3
    assert sum(u["retries"] for u in data["usage"].values()) == 4
    assert sent(out) == stats["request_count"]


def test_a_transient_500_does_not_change_the_structured_output_mode(tmp_path: Path) -> None:
    responses = tmp_path / "responses.jsonl"
    text = "You will love the cat-friendly flat."
    rows = [{"persona_id": f"seed_00{i}", "task_id": "apartment", "response": text} for i in (1, 2, 3)]
    responses.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with server_process() as server:
        out = tmp_path / "run"
        server.control("fail", {"status": 500, "count": 1})  # the first judge request
        result = subprocess.run(
            cli("judge", "--responses", str(responses), "--model", "m", "--judge",
                f"openai:j@{server.base_url}", "--concurrency", "1", "--out", str(out), "--no-progress"),
            env=env(), capture_output=True, text=True, timeout=180)
        stats = server.stats()
    assert result.returncode == 0, result.stderr
    assert stats["errors_sent"] == [500]
    assert stats["response_formats"] == ["json_schema"] * 4, stats["response_formats"]
    assert sent(out) == stats["request_count"]


def test_manifest_counts_equal_the_servers_after_kill_9(tmp_path: Path) -> None:
    out = tmp_path / "run"
    records = out / "responses.jsonl"
    with server_process("--latency-s", "0.1") as server:
        args = run_args(server, out, "--concurrency", "2", personas="8", tasks="apartment,birthday_gift")
        for lines in (3, 8):  # kill -9 once 3, then 8 records are on disk (of 16), mid-request
            proc = subprocess.Popen(args, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and (
                    not records.exists() or records.read_text().count("\n") < lines):
                time.sleep(0.02)
            time.sleep(0.05)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            assert records.read_text().count("\n") < 16, "the run finished before it was killed"
        result = subprocess.run(args, env=env(), capture_output=True, text=True, timeout=300)
        stats = server.stats()
    assert result.returncode == 0, result.stderr
    m = manifest(out)
    assert m["status"] == "complete" and m["sessions"] == 3
    assert sent(out) == stats["request_count"], (m["usage"], stats["request_count"])


def test_sigterm_is_handled_like_ctrl_c(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with server_process("--latency-s", "0.3") as server:
        proc = subprocess.Popen(run_args(server, out, "--concurrency", "1", personas="5"), env=env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (out / "responses.jsonl").exists():
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
        stats = server.stats()
    assert proc.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert manifest(out)["status"] == "interrupted"
    assert sent(out) == stats["request_count"]


def test_a_locked_run_directory_gives_one_line(tmp_path: Path) -> None:
    from filelock import FileLock

    out = tmp_path / "run"
    out.mkdir()
    with FileLock(str(out / ".lock")):
        result = subprocess.run(cli("run", "--model", "scripted", "--judge", "scripted", "--personas", "1",
                                    "--tasks", "apartment", "--out", str(out), "--no-progress"),
                                env=env(), capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    lines = error_lines(result.stderr)
    assert len(lines) == 1 and "in use by another mirage-bench process" in lines[0], result.stderr


def test_too_many_failed_records_exit_1_with_the_counts(tmp_path: Path) -> None:
    with server_process() as server:
        server.control("fail", {"status": 400, "count": 2, "message": "flagged by the content filter"})
        out = tmp_path / "run"
        result = subprocess.run(
            cli("run", "--model", f"openai:m@{server.base_url}", "--stages", "task", "--personas", "3",
                "--tasks", "apartment", "--concurrency", "1", "--out", str(out), "--no-progress"),
            env=env(), capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stderr
    assert "task: 2 of 3 failed" in result.stderr and "--max-failure-rate 0.2" in result.stderr
    assert manifest(out)["status"] == "complete"
