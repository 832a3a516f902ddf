"""CLI of the reward area: ``mirage-bench reward build-pairs | train | score | evaluate | synthetic``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from mirage_bench.commands import fail

if TYPE_CHECKING:
    from mirage_bench.backends.base import GenerateParams
    from mirage_bench.reward.artifact import TrainedRewardModel
    from mirage_bench.reward.data import PreferencePair

reward_app = typer.Typer(
    help="Memory-aware reward model (seed 003): pairs, training, scoring, evaluation.", no_args_is_help=True
)

CACHE_HELP = "sqlite response cache (reused across runs; only successful completions are stored)."
PAIRS_HELP = (
    "this area's pairs JSONL, or the dataset builder's preference_pairs (a built dataset folder, "
    "its parquet, or JSONL of its rows)."
)
SPLIT_HELP = "Keep only pairs of this dataset split (repeat; default: every pair)."
MAX_TOKENS_HELP = "Output-token cap of every judge call (default: 1024; small values for smoke tests)."
SYNTHETIC_BANNER = (
    "SYNTHETIC pairs (fixtures, or made by a scripted / smoke-test model): the numbers and weights below "
    "show that the pipeline runs and are not results about any model or people."
)


def _params(max_tokens: int | None) -> GenerateParams | None:
    """Generation parameters for judge calls (``None``: each call's default)."""
    from mirage_bench.backends.base import GenerateParams

    return GenerateParams(max_tokens=max_tokens) if max_tokens else None


@reward_app.command("build-pairs")
def build_pairs_command(
    participants: Path = typer.Option(
        ..., "--participants", help="JSONL: participant_id, memories, queries, source."
    ),
    generator: list[str] = typer.Option(
        ..., "--generator", help="Generator spec (repeat; one drawn per query)."
    ),
    screener: str = typer.Option(..., "--screener", help="Spec of the LLM that screens candidate pairs."),
    out: Path = typer.Option(..., "--out", help="Output pairs JSONL (unlabelled)."),
    embedder: str = typer.Option(
        "sentence-transformers",
        "--embedder",
        help="sentence-transformers[:<dir>] | openai:text-embedding-3-small | hashing",
    ),
    k: int = typer.Option(9, "--k", min=1, help="Memories retrieved per query."),
    per_participant: int = typer.Option(15, "--per-participant", min=1, help="Pairs kept per participant."),
    seed: int = typer.Option(0, "--seed"),
    cache: Path = typer.Option(None, "--cache", help=CACHE_HELP),
    concurrency: int = typer.Option(8, "--concurrency", min=1),
) -> None:
    """Retrieve memories, generate with/without-memory responses, screen, keep the top pairs.

    Example:

        mirage-bench reward build-pairs --participants p.jsonl --generator openai:gpt-4o-mini \\
            --screener openai:gpt-4o --out pairs.jsonl
    """
    from mirage_bench.client import run_closing
    from mirage_bench.reward.data import DataError, Participant, read_jsonl, write_jsonl
    from mirage_bench.reward.llm import open_client
    from mirage_bench.reward.pairs import build_pairs
    from mirage_bench.reward.retrieval import make_embedder

    try:
        people = read_jsonl(participants, Participant)
        gens = {g: open_client(g, cache_path=cache, concurrency=concurrency) for g in generator}
        scr = open_client(screener, cache_path=cache, concurrency=concurrency)
        emb = make_embedder(embedder, cache_path=cache, concurrency=concurrency)
        report = run_closing(
            build_pairs(people, gens, scr, emb, k=k, per_participant=per_participant, seed=seed),
            *gens.values(),
            scr,
            emb,  # type: ignore[arg-type]  # duck-typed: aclose() and backend.name
        )
    except (DataError, ValueError, ImportError, FileNotFoundError) as exc:
        raise fail(exc) from exc
    from mirage_bench.reward.data import is_flagged_source
    from mirage_bench.reward.llm import SYNTHETIC_SPEC, is_smoke

    flag = (
        "synthetic"
        if SYNTHETIC_SPEC in (*generator, screener)
        else "smoke_test"
        if any(is_smoke(c) for c in (*gens.values(), scr))
        else None
    )
    if flag:
        for p in report.pairs:
            if not is_flagged_source(p.source):
                p.source = f"{flag}+{p.source}"
        typer.echo(
            f"WARNING: a scripted or smoke-test model wrote or screened these pairs: their source is "
            f"marked {flag}+<source>; they are not data.",
            err=True,
        )
    write_jsonl(out, report.pairs)
    typer.echo(
        f"wrote {len(report.pairs)} pairs from {len(people)} participants to {out} "
        f"({report.screened} screened, {len(report.dropped)} queries dropped)"
    )
    for line in report.dropped[:20]:
        typer.echo(f"  dropped: {line}", err=True)
    for line in report.notes[:20]:
        typer.echo(f"  note: {line}", err=True)
    typer.echo(f"embeddings ({emb.name}): {emb.stats.as_dict()}")


@reward_app.command("train")
def train_command(
    pairs: Path = typer.Option(..., "--pairs", help="Labelled pairs: " + PAIRS_HELP),
    out: Path = typer.Option(..., "--out", help="Output directory (model, CV scores, fold audit)."),
    judge: str = typer.Option(
        None, "--judge", help="Rubric induction/scoring LLM spec (omit: response features only)."
    ),
    subset: str = typer.Option(
        "clear", "--subset", help="clear (much-better only, as in §5) | strict (all non-ties)."
    ),
    folds: int = typer.Option(5, "--folds", min=2),
    shuffles: int = typer.Option(10, "--shuffles", min=1),
    inner_folds: int = typer.Option(4, "--inner-folds", min=2),
    passes: int = typer.Option(5, "--passes", min=1),
    per_pass: int = typer.Option(10, "--per-pass", min=1),
    dims_per_pass: int = typer.Option(10, "--dims-per-pass", min=1),
    max_dims: int = typer.Option(
        None, "--max-dims", min=1, help="Keep at most this many consolidated rubric dimensions (cost cap)."
    ),
    max_tokens: int = typer.Option(None, "--max-tokens", min=1, help=MAX_TOKENS_HELP),
    on_rubric_failure: str = typer.Option(
        "fail",
        "--on-rubric-failure",
        help="fail: a failed rubric induction stops training; response-only: fit that fold/model on the "
        "response features and record why (for smoke tests with a model that cannot write JSON).",
    ),
    split: list[str] = typer.Option(None, "--split", help=SPLIT_HELP),
    seed: int = typer.Option(0, "--seed"),
    cache: Path = typer.Option(None, "--cache", help=CACHE_HELP),
    concurrency: int = typer.Option(8, "--concurrency", min=1),
    cv: bool = typer.Option(True, "--cv/--no-cv", help="Run the grouped cross-validation (held-out scores)."),
    rubric_judge: bool = typer.Option(
        True,
        "--rubric-judge/--no-rubric-judge",
        help="With --judge and CV: also run the rubric-judge baseline, each pair judged with the rubric "
        "of the outer fold that held it out (first repeat; 2 judge calls per pair).",
    ),
) -> None:
    """Grouped CV (held-out scores + ablations) and the full-data fit, saved with rubric and weights.

    Example:

        mirage-bench reward train --pairs labelled_pairs.jsonl --out models/memory_aware --judge openai:gpt-4o
    """
    from mirage_bench.reward.artifact import fit_full
    from mirage_bench.reward.data import DataError, load_pairs, write_jsonl
    from mirage_bench.reward.evaluation import evaluate_scores, select_pairs
    from mirage_bench.reward.features import build_features
    from mirage_bench.reward.llm import is_smoke, open_client
    from mirage_bench.reward.model import CVError, FixedFeaturizer, RubricFeaturizer, cross_validate
    from mirage_bench.reward.rubric import RubricError

    try:
        if on_rubric_failure not in ("fail", "response-only"):
            raise ValueError("--on-rubric-failure must be fail or response-only")
        all_pairs = load_pairs(pairs, splits=split or None)
        data = select_pairs(all_pairs, subset)
        if not data:
            raise DataError(
                f"{pairs}: none of its {len(all_pairs)} pairs is in the {subset!r} subset"
                + (" (try --subset strict)" if subset == "clear" else "")
            )
        from mirage_bench.reward.data import is_flagged_source

        synthetic = any(is_flagged_source(p.source) for p in data)
        client = open_client(judge, cache_path=cache, concurrency=concurrency) if judge else None
        smoke = bool(client and is_smoke(client))
        featurizer = (
            RubricFeaturizer(
                client,
                passes=passes,
                per_pass=per_pass,
                dims_per_pass=dims_per_pass,
                params=_params(max_tokens),
                max_dimensions=max_dims,
                on_failure="raise" if on_rubric_failure == "fail" else "response_only",
            )
            if client
            else FixedFeaturizer(asyncio.run(build_features(None, None, data)))
        )
        out.mkdir(parents=True, exist_ok=True)
        if cv:
            res = asyncio.run(
                cross_validate(
                    data, featurizer, n_splits=folds, n_shuffles=shuffles, inner_splits=inner_folds, seed=seed
                )
            )
            if smoke:
                for recs in res.scores.values():
                    for r in recs:
                        r.details["smoke_test"] = True
            write_jsonl(out / "cv_scores.jsonl", [r for recs in res.scores.values() for r in recs])
            shown = dict(res.scores)
            if client is not None and rubric_judge:
                from mirage_bench.reward.baselines import fold_rubric_judge

                baseline = asyncio.run(
                    fold_rubric_judge(client, data, res.folds, seed=seed, params=_params(max_tokens))
                )
                for recs in baseline.values():
                    for r in recs:
                        if smoke:
                            r.details["smoke_test"] = True
                write_jsonl(out / "cv_rubric_judge_scores.jsonl", [r for v in baseline.values() for r in v])
                shown.update(baseline)
            audit = [
                {
                    "shuffle": f.shuffle,
                    "fold": f.fold,
                    "train_participants": f.train_participants,
                    "test_participants": f.test_participants,
                    "chosen_C": f.chosen_C,
                    "failed_scores": f.failed_scores,
                    "rubric": f.rubric.model_dump() if f.rubric else None,
                    "rubric_error": f.rubric_error,
                }
                for f in res.folds
            ]
            (out / "cv_folds.json").write_text(json.dumps(audit, indent=1) + "\n", encoding="utf-8")
            typer.echo(evaluate_scores(all_pairs, shown, subset=subset).format())
        model = asyncio.run(fit_full(data, featurizer, judge=judge, inner_splits=inner_folds, seed=seed))
        model.smoke_test = smoke
        path = model.save(out)
    except (DataError, CVError, RubricError, ValueError, ImportError) as exc:
        raise fail(exc) from exc
    typer.echo(
        f"\nTable 4 - largest standardized coefficients of the full-data fit (C={model.C}, "
        f"{model.n_pairs} pairs, {model.n_participants} participants, sources {model.pair_sources})"
    )
    for name, coef, mem in model.top_coefficients(5):
        typer.echo(f"  {coef:+.3f}  {name}{'  [memory]' if mem else ''}")
    if model.rubric_error:
        typer.echo(f"NOTE: no rubric features ({model.rubric_error}); response features only.")
    if model.smoke_test:
        typer.echo("WARNING: SMOKE TEST judge; these weights and numbers are not results.")
    if synthetic:
        typer.echo(SYNTHETIC_BANNER)
    typer.echo(f"saved {path}")


def _in_sample_check(
    trained: TrainedRewardModel, data: list[PreferencePair], model_dir: Path, *, allow: bool
) -> set[str]:
    """Ids of ``data`` the model in ``model_dir`` was trained on; refuse them unless ``allow``."""
    from mirage_bench.reward.artifact import ArtifactError

    try:
        hits = trained.in_sample(data)
    except ArtifactError as exc:
        typer.echo(f"WARNING: {model_dir}: {exc}", err=True)
        return set()
    if not hits:
        return set()
    what = (
        f"{len(hits)} of the {len(data)} pairs (e.g. {', '.join(hits[:3])}) were used to train the model "
        f"in {model_dir} or come from its training participants"
    )
    if not allow:
        raise ValueError(
            f"{what}: their scores would be in-sample, not held-out. Score held-out pairs, use the "
            "cross-validation's cv_scores.jsonl, or pass --allow-in-sample to score them anyway (flagged)."
        )
    typer.echo(
        f"WARNING: IN-SAMPLE: {what}; their scores are flagged in_sample and are not held-out results.",
        err=True,
    )
    return set(hits)


@reward_app.command("score")
def score_command(
    pairs: Path = typer.Option(..., "--pairs", help="Pairs to score (labels not needed): " + PAIRS_HELP),
    out: Path = typer.Option(..., "--out", help="Output score JSONL (pair_id, method, p_memory, ...)."),
    method: str = typer.Option("model", "--method", help="model | direct-judge | rubric-judge | seq-rm"),
    model_dir: Path = typer.Option(
        None, "--model", help="Trained model dir (method model; rubric for rubric-judge)."
    ),
    judge: str = typer.Option(None, "--judge", help="LLM spec (model, direct-judge, rubric-judge)."),
    rm: str = typer.Option(None, "--rm", help="Sequence-classification RM: local folder or Hub id (seq-rm)."),
    memories: bool = typer.Option(
        True, "--memories/--no-memories", help="seq-rm: include [Relevant Memories]."
    ),
    seed: int = typer.Option(0, "--seed", help="Judges: seed of the per-pair presentation order."),
    max_tokens: int = typer.Option(None, "--max-tokens", min=1, help=MAX_TOKENS_HELP),
    split: list[str] = typer.Option(None, "--split", help=SPLIT_HELP),
    name: str = typer.Option(
        None,
        "--name",
        help="Method name written in the scores (method model: default memory_aware_rm_full_fit).",
    ),
    allow_in_sample: bool = typer.Option(
        False,
        "--allow-in-sample",
        help="method model / rubric-judge: score pairs the model (or its rubric) was fitted on, or pairs "
        "of its training participants, anyway (refused by default; such scores are flagged in_sample).",
    ),
    cache: Path = typer.Option(None, "--cache", help=CACHE_HELP),
    concurrency: int = typer.Option(8, "--concurrency", min=1),
) -> None:
    """Score pairs with a trained model or a baseline; write P(memory response preferred) per pair.

    Example:

        mirage-bench reward score --pairs pairs.jsonl --model models/memory_aware --out scores.jsonl
    """
    from mirage_bench.reward.artifact import ArtifactError, TrainedRewardModel
    from mirage_bench.reward.baselines import judge_pairs
    from mirage_bench.reward.data import DataError, load_pairs, write_jsonl
    from mirage_bench.reward.llm import is_smoke, open_client

    try:
        data = load_pairs(pairs, splits=split or None)
        client = open_client(judge, cache_path=cache, concurrency=concurrency) if judge else None
        params = _params(max_tokens)
        smoke = bool(client is not None and is_smoke(client))
        in_sample: set[str] = set()
        if method in ("model", "rubric-judge"):
            if model_dir is None:
                raise ValueError(f"--method {method} needs --model DIR")
            trained = TrainedRewardModel.load(model_dir)
            in_sample = _in_sample_check(trained, data, model_dir, allow=allow_in_sample)
        if method == "model":
            if trained.rubric is not None and client is None:
                raise ValueError("this model has rubric features: give --judge")
            records = asyncio.run(trained.score_pairs(data, client, params=params))
            smoke = smoke or trained.smoke_test
            for r in records:
                r.method = name or "memory_aware_rm_full_fit"
        elif method in ("direct-judge", "rubric-judge"):
            if client is None:
                raise ValueError(f"--method {method} needs --judge")
            kind = "direct" if method == "direct-judge" else "rubric"
            rubric = trained.rubric if kind == "rubric" else None
            if kind == "rubric" and rubric is None:
                raise ValueError("the model in --model has no rubric")
            res = asyncio.run(judge_pairs(client, data, kind=kind, rubric=rubric, seed=seed, params=params))
            records = [r for recs in res.values() for r in recs]
        elif method == "seq-rm":
            if not rm:
                raise ValueError("--method seq-rm needs --rm")
            from mirage_bench.reward.hf_rm import SequenceClassifierRewardModel

            records = SequenceClassifierRewardModel.from_pretrained(rm).score_pairs(
                data, with_memories=memories
            )
        else:
            raise ValueError(f"unknown --method {method!r}")
    except (DataError, ArtifactError, ValueError, ImportError, OSError) as exc:
        raise fail(exc) from exc
    if smoke:
        for r in records:
            r.details["smoke_test"] = True
        typer.echo("WARNING: SMOKE TEST model; these scores are not results.", err=True)
    if name and method != "model":
        for r in records:
            r.method = f"{name}_{r.method}"
    if method in ("model", "rubric-judge") and in_sample:
        for r in records:
            if r.pair_id in in_sample:
                r.details["in_sample"] = True
    write_jsonl(out, records)
    failed = sum(r.p_memory is None for r in records)
    typer.echo(f"wrote {len(records)} scores to {out} ({failed} failed)")


@reward_app.command("evaluate")
def evaluate_command(
    pairs: Path = typer.Option(..., "--pairs", help="Labelled pairs: " + PAIRS_HELP),
    scores: list[Path] = typer.Option(..., "--scores", help="Score JSONL (repeat for several files)."),
    subset: str = typer.Option("clear", "--subset", help="clear | strict"),
    out_dir: Path = typer.Option(
        Path("submissions/store/reward"),
        "--out-dir",
        help="Where scored pair sets go (the Space's Reward tab reads this folder).",
    ),
    prefix: str = typer.Option("", "--prefix", help="File-name prefix of the scored pair sets."),
    write: bool = typer.Option(True, "--write/--no-write", help="Write scored pair sets."),
    split: list[str] = typer.Option(None, "--split", help=SPLIT_HELP),
) -> None:
    """Print Table 3 / Table 5 shaped results; write one scored pair set per method.

    Example:

        mirage-bench reward evaluate --pairs labelled_pairs.jsonl --scores scores.jsonl
    """
    from mirage_bench.reward.data import DataError, load_pairs
    from mirage_bench.reward.evaluation import evaluate_scores, load_scores, select_pairs, write_scored_sets

    try:
        data = load_pairs(pairs, splits=split or None)
        by_method = load_scores(scores)
        if split:  # score files may cover every split: keep the selected pairs' scores
            ids = {p.pair_id for p in data}
            by_method = {m: [r for r in recs if r.pair_id in ids] for m, recs in by_method.items()}
        report = evaluate_scores(data, by_method, subset=subset)
    except (DataError, ValueError) as exc:
        raise fail(exc) from exc
    typer.echo(report.format())
    if write:
        for path in write_scored_sets(select_pairs(data, subset), by_method, out_dir, prefix=prefix):
            typer.echo(f"wrote {path}")


@reward_app.command("synthetic")
def synthetic_command(
    out: Path = typer.Option(
        ..., "--out", help="Directory for synthetic_pairs.jsonl / synthetic_participants.jsonl."
    ),
    participants: int = typer.Option(20, "--participants", min=2),
    pairs_per_participant: int = typer.Option(12, "--pairs-per-participant", min=1),
    seed: int = typer.Option(0, "--seed"),
) -> None:
    """Write SYNTHETIC fixtures (fake participants and labels) for offline demos; never data.

    Example:

        mirage-bench reward synthetic --out demo/
    """
    from mirage_bench.reward.data import write_jsonl
    from mirage_bench.reward.synthetic import synthetic_pairs, synthetic_participants

    write_jsonl(
        out / "synthetic_pairs.jsonl", synthetic_pairs(participants, pairs_per_participant, seed=seed)
    )
    write_jsonl(out / "synthetic_participants.jsonl", synthetic_participants(min(participants, 4), seed=seed))
    typer.echo(f"wrote SYNTHETIC fixtures to {out} (use --judge synthetic for the scripted test double)")


def register(app: typer.Typer) -> None:
    """Add the ``reward`` command group to the top-level app."""
    app.add_typer(reward_app, name="reward")
