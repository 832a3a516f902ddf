"""Who is submitting or annotating: Hugging Face OAuth on a Space, the contact field locally.

On a Space (``SPACE_ID`` set by the Hub, or ``MIRAGE_REQUIRE_LOGIN=1``) the app shows a
``gr.LoginButton`` (the Space card sets ``hf_oauth: true``); submitting and writing labels then
need a logged-in user, whose HF username keys the rate limit and is the annotator id. Locally
nobody logs in: the contact field and the annotator id field stay the fallback.

Handlers receive the profile through gradio's injection of a parameter annotated
``gr.OAuthProfile | None`` (``None`` when nobody is logged in, or when OAuth is off);
:func:`with_profile` sets that annotation on a handler (this package's modules use postponed
annotations, which gradio could not resolve for a name imported inside a function).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

LOGIN_TO_SUBMIT = "log in with Hugging Face (the button at the top of the page) to submit"
LOGIN_TO_ANNOTATE = "Log in with Hugging Face (the button at the top of the page) to annotate."


def login_required(setting: bool | None = None) -> bool:
    """Whether submitters and annotators must log in: ``setting``, else ``$MIRAGE_REQUIRE_LOGIN``
    (``1``/``0``), else True exactly when running on a Hugging Face Space (``$SPACE_ID``).

    >>> login_required(True), login_required(False)
    (True, False)
    """
    if setting is not None:
        return setting
    env = os.environ.get("MIRAGE_REQUIRE_LOGIN", "").strip().lower()
    if env:
        return env in ("1", "true", "yes", "on")
    return bool(os.environ.get("SPACE_ID"))


def username(profile: Any) -> str:
    """The HF username of an OAuth profile ('' when nobody is logged in).

    >>> username(None)
    ''
    """
    if profile is None:
        return ""
    return str(getattr(profile, "username", None) or getattr(profile, "preferred_username", "") or "")


def with_profile(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark ``fn``'s ``profile`` parameter for gradio's OAuth profile injection."""
    import gradio as gr

    fn.__annotations__ = {"profile": gr.OAuthProfile | None}
    return fn
