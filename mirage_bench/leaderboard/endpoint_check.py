"""Endpoint submissions: a one-message reachability check and a secret-free environment.

Submitted endpoints are third-party OpenAI-compatible servers (vLLM, llama.cpp server, TGI, Ollama).
The leaderboard worker checks one first with a single tiny chat request, so an unreachable or
refusing endpoint fails at once with its reason instead of after hours of retries, and it talks to
it from a subprocess whose environment holds none of the Space's secrets.
"""

from __future__ import annotations

import os
import re

#: Sent as the bearer token to submitted endpoints (they must be keyless).
KEYLESS_TOKEN = "no-key-needed"
#: Environment variable names treated as secrets.
SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)", re.IGNORECASE)


def keyless_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's environment) without any secret-looking variable.

    Submitted endpoints are third-party servers: a subprocess talking to one must not inherit the
    Space's API keys (the OpenAI SDK would send ``OPENAI_API_KEY`` to any base URL).

    >>> sorted(keyless_env({"OPENAI_API_KEY": "sk-x", "HF_TOKEN": "t", "PATH": "/bin"}))
    ['PATH']
    """
    env = dict(os.environ) if env is None else env
    return {k: v for k, v in env.items() if not SECRET_ENV.search(k)}


def check_endpoint(base_url: str, model: str, *, timeout_s: float = 30.0) -> str | None:
    """Send one tiny chat completion to an OpenAI-compatible endpoint; the problem, or None if it answers.

    Catches what would otherwise cost hours of retries over 1,800 calls: an unreachable host, a
    refused connection, an unknown model id (HTTP 404) or a server that needs a key (HTTP 401).
    """
    import httpx

    url = base_url.rstrip("/") + "/chat/completions"
    body = {
        "model": model,
        "messages": [{"role": "user", "content": "Reply with the word OK."}],
        "max_tokens": 4,
        "temperature": 0,
    }
    try:
        resp = httpx.post(
            url, json=body, timeout=timeout_s, headers={"Authorization": f"Bearer {KEYLESS_TOKEN}"}
        )
    except httpx.TimeoutException:
        return f"endpoint {base_url} did not answer a one-message test request within {timeout_s:g} s"
    except httpx.HTTPError as exc:
        return f"endpoint {base_url} is unreachable ({type(exc).__name__}: {exc})"
    if resp.status_code >= 400:
        detail = " ".join(resp.text.split())[:300]
        hint = " (only keyless endpoints are supported)" if resp.status_code in (401, 403) else ""
        return (
            f"endpoint {base_url} answered HTTP {resp.status_code} to a one-message test request for "
            f"model {model!r}{hint}: {detail}"
        )
    try:
        choice = resp.json()["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        choice = None
    if not isinstance(choice, dict):
        return f"endpoint {base_url} answered, but not with an OpenAI chat completion ({url})"
    return None


__all__ = ["KEYLESS_TOKEN", "SECRET_ENV", "check_endpoint", "keyless_env"]
