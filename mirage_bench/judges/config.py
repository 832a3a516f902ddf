"""Judge configurations as data: one YAML file per judge in ``configs/judges/`` (alpaca_eval style).

A config names the judge's model spec, its decoding (temperature, max tokens), the prompt
templates it sends (response judging: G.2 system, user and output contract; fixed-claim judging:
this package's claim templates), whether the JSON schema is passed to the backend (structured
output) and how many calls one answer may take before it counts as a parse failure.

``--judge-config NAME|FILE`` accepts a bundled name (``paper``, ``local``, ...) or a path to a YAML
file; a path that does not exist is an error, never read as a name. The paper's judge is
:data:`DEFAULT_JUDGE_CONFIG`.

The config's :attr:`JudgeConfig.sha256` is the sha256 of its canonical JSON together with the
sha256 of every template it names, so editing a template or overriding the spec changes it: it
identifies the instrument, and a run's manifest records it.

>>> config = load_judge_config("paper")
>>> config.spec, config.temperature, config.prompts.user
('anthropic:claude-opus-4-7-20260610', 0.0, 'judge_user')
>>> config.with_spec("scripted").spec
'scripted'
>>> config.with_spec("scripted").sha256 != config.sha256
True
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from mirage_bench.paths import resource_dir
from mirage_bench.structs import first_error

#: The config used when none is named: the paper's judge.
DEFAULT_JUDGE_CONFIG = "paper"
_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")
#: Placeholders each template role must have (a template for another role is refused).
_REQUIRED_PLACEHOLDERS: dict[str, set[str]] = {
    "prompts.user": {"revealed_facts", "task", "ground_truth", "response"},
    "claim_prompts.user": {"revealed_facts", "task", "claim"},
}


class JudgeConfigError(ValueError):
    """A judge config is missing, unreadable or invalid."""


class ResponsePrompts(BaseModel):
    """Templates for judging a whole response (extract + label), in the order they are sent."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    system: str = "judge_system"
    user: str = "judge_user"
    output_format: str = "judge_output_format"


class ClaimPrompts(BaseModel):
    """Templates for labelling one given claim (``judge-claims``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    system: str = "judge_claim_system"
    user: str = "judge_claim_user"


class JudgeConfig(BaseModel):
    """One judge: model spec, decoding, prompt templates, output mode, parse attempts."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    description: str = ""
    #: Where the settings come from (paper section or "package choice").
    provenance: str = ""
    spec: str
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(4096, ge=1, le=200_000)
    #: ``json_schema``: the output schema is passed to the backend; ``none``: prompt-only JSON.
    structured_output: Literal["json_schema", "none"] = "json_schema"
    parse_attempts: int = Field(3, ge=1, le=10)
    prompts: ResponsePrompts = Field(default_factory=ResponsePrompts)
    claim_prompts: ClaimPrompts = Field(default_factory=ClaimPrompts)

    @field_validator("spec")
    @classmethod
    def _valid_spec(cls, value: str) -> str:
        from mirage_bench.backends.registry import parse_spec

        parse_spec(value)
        return value.strip()

    # --- derived -----------------------------------------------------------------------------
    def templates(self) -> dict[str, str]:
        """``{role: template name}`` for every template the config names."""
        return {
            "prompts.system": self.prompts.system,
            "prompts.user": self.prompts.user,
            "prompts.output_format": self.prompts.output_format,
            "claim_prompts.system": self.claim_prompts.system,
            "claim_prompts.user": self.claim_prompts.user,
        }

    def response_templates(self) -> tuple[str, ...]:
        """The response-judging templates, in the order they are sent."""
        return (self.prompts.system, self.prompts.user, self.prompts.output_format)

    def template_shas(self) -> dict[str, str]:
        """sha256 of each named template (by template name)."""
        from mirage_bench.prompts import load_template

        return {name: load_template(name).sha256 for name in sorted(set(self.templates().values()))}

    @property
    def sha256(self) -> str:
        """sha256 of the canonical config JSON plus the sha256 of each template it names."""
        blob = json.dumps(
            {"config": self.model_dump(mode="json"), "templates": self.template_shas()}, sort_keys=True
        )
        return hashlib.sha256(blob.encode()).hexdigest()

    def with_spec(self, spec: str | None) -> JudgeConfig:
        """This config with another model spec (``--judge SPEC`` over ``--judge-config``)."""
        if not spec or spec.strip() == self.spec:
            return self
        return self.model_validate({**self.model_dump(), "spec": spec})

    def manifest_entry(self) -> dict[str, Any]:
        """What a run's manifest records: the whole config and its sha256."""
        return {"config": self.model_dump(mode="json"), "sha256": self.sha256}

    def check_templates(self) -> None:
        """Raise :class:`JudgeConfigError` unless every template exists and fits its role."""
        from mirage_bench.prompts import PromptError, load_template

        for role, name in self.templates().items():
            try:
                template = load_template(name)
            except PromptError as exc:
                raise JudgeConfigError(f"judge config {self.name!r}: {role}: {exc}") from exc
            need = _REQUIRED_PLACEHOLDERS.get(role, set())
            missing = sorted(need - set(template.placeholders))
            extra = sorted(set(template.placeholders) - need)
            if missing or extra:
                raise JudgeConfigError(
                    f"judge config {self.name!r}: {role} template {name!r} has placeholders "
                    f"{list(template.placeholders)}; this role needs exactly {sorted(need)}"
                )


def judges_dir() -> Path:
    """The folder of bundled judge configs (``configs/judges``)."""
    return resource_dir("configs") / "judges"


def list_judge_configs() -> list[str]:
    """Names of the bundled judge configs, sorted.

    >>> {"paper", "local"} <= set(list_judge_configs())
    True
    """
    return sorted(p.stem for p in judges_dir().glob("*.yaml") if p.is_file())


def _looks_like_path(text: str) -> bool:
    return "/" in text or "\\" in text or text.endswith((".yaml", ".yml")) or text.startswith(".")


def resolve_judge_config_path(name_or_file: str | Path) -> Path:
    """The file of a config name or path; raise :class:`JudgeConfigError` naming what exists."""
    text = str(name_or_file).strip()
    if isinstance(name_or_file, Path) or _looks_like_path(text):
        path = Path(text)
        if not path.is_file():
            raise JudgeConfigError(f"judge config file {text!r} not found")
        return path
    if not _NAME.fullmatch(text):
        raise JudgeConfigError(f"invalid judge config name {text!r} (a bundled name or a .yaml path)")
    path = judges_dir() / f"{text}.yaml"
    if not path.is_file():
        raise JudgeConfigError(
            f"no bundled judge config named {text!r}; bundled: {', '.join(list_judge_configs())} "
            "(or pass a path to a .yaml file)"
        )
    return path


def load_judge_config(name_or_file: str | Path | None = None) -> JudgeConfig:
    """Load and validate a judge config (default: the paper's); templates are checked too."""
    path = resolve_judge_config_path(name_or_file or DEFAULT_JUDGE_CONFIG)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise JudgeConfigError(f"cannot read judge config {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise JudgeConfigError(f"judge config {path}: expected a mapping of settings")
    try:
        config = JudgeConfig.model_validate(data)
    except ValidationError as exc:
        raise JudgeConfigError(f"judge config {path}: {first_error(exc, '(top level)')}") from exc
    config.check_templates()
    return config


def effective_judge_config(
    judge_config: str | Path | JudgeConfig | None,
    spec: str | None,
    *,
    max_tokens: int | None = None,
    parse_attempts: int | None = None,
) -> JudgeConfig | None:
    """The judge a run uses: ``judge_config`` (default: the paper's) with the command line's overrides.

    ``spec`` (``--judge``) replaces the config's model spec; ``max_tokens`` (``--judge-max-tokens``)
    and ``parse_attempts`` (``--parse-attempts``) replace its values when given. Returns ``None``
    when neither a config nor a spec is named (a run without a judge).

    >>> effective_judge_config(None, "scripted", max_tokens=99).max_tokens
    99
    >>> effective_judge_config(None, None) is None
    True
    """
    if judge_config is None and not spec:
        return None
    config = judge_config if isinstance(judge_config, JudgeConfig) else load_judge_config(judge_config)
    config = config.with_spec(spec)
    update: dict[str, Any] = {}
    if max_tokens is not None and max_tokens != config.max_tokens:
        update["max_tokens"] = max_tokens
    if parse_attempts is not None and parse_attempts != config.parse_attempts:
        update["parse_attempts"] = parse_attempts
    return config.model_validate({**config.model_dump(), **update}) if update else config
