"""The dataset card (``README.md``) and ``eval.yaml`` of a build.

The card is rendered from ``cards/dataset_card.md`` with huggingface_hub's ``DatasetCard`` and
``DatasetCardData``; its YAML carries ``configs`` (``data_files`` entries with ``split`` and
``path`` only) and ``dataset_info`` with explicit features written by ``datasets`` itself.
Every number in the card is computed from the rows being published or is one of the paper's
figures, named as such.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import pandas as pd

from mirage_bench.types import OVER_INFERENCE_LABELS, STEREOTYPE_TYPES

from .configs import CONFIG_DESCRIPTIONS, FIELD_DOCS, ConfigTable, config_categories

__all__ = ["CARD_CITATIONS", "GATED_PROMPT", "build_card", "eval_yaml", "size_category"]

GATED_PROMPT = (
    "The preference_pairs config holds de-identified judgments by real study participants about responses "
    "grounded in their own memories. By requesting access you pledge not to attempt to re-identify any "
    "participant or any person mentioned in the records, not to link the records with other data for that "
    "purpose, and to report any identifying detail you find to the maintainers instead of using it."
)

#: The BibTeX entries printed by the card (author and URL: the papers' text names neither, so the
#: entries say so rather than invent them; the URL is the dataset repository).
CARD_CITATIONS: dict[str, str] = {
    "miragebench": (
        "@misc{miragebench2026,\n"
        "  title  = {The Personalization Mirage: How LLMs Fabricate User Profiles, and Why Self-Monitoring "
        "Misleads},\n"
        "  author = {{MirageBench authors}},\n"
        "  year   = {2026},\n"
        "  note   = {MirageBench dataset; author list not given in the source text},\n"
        "  url    = {https://huggingface.co/datasets/%s}\n"
        "}"
    ),
    "memory_aware_rm": (
        "@misc{memoryaware2026reward,\n"
        "  title  = {Memory-Aware Reward Modeling: Learning Human Preferences for LLM Memory Use},\n"
        "  author = {{Memory-Aware Reward Modeling authors}},\n"
        "  year   = {2026},\n"
        "  note   = {preference pairs; author list not given in the source text},\n"
        "  url    = {https://huggingface.co/datasets/%s}\n"
        "}"
    ),
}

_SIZE_BUCKETS = (
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
)


def size_category(n_rows: int) -> str:
    """The Hub's ``size_categories`` bucket for ``n_rows``.

    >>> size_category(999), size_category(143_616)
    ('n<1K', '100K<n<1M')
    """
    for limit, name in _SIZE_BUCKETS:
        if n_rows < limit:
            return name
    return "n>10M"


def _type_name(feature: Any, allowed: tuple[str, ...] | None = None) -> str:
    from datasets import ClassLabel, List, Value

    if allowed:
        return "string, one of " + ", ".join(f"`{n}`" for n in allowed)
    if isinstance(feature, ClassLabel):
        return "class label: " + ", ".join(f"`{n}`" for n in feature.names)
    if isinstance(feature, List):
        inner = feature.feature
        if isinstance(inner, dict):
            return "list of {" + ", ".join(f"{k}: {_type_name(v)}" for k, v in inner.items()) + "}"
        return f"list of {_type_name(inner)}"
    if isinstance(feature, Value):
        return feature.dtype
    return type(feature).__name__


def _agreement(rows: pd.DataFrame) -> dict[str, Any]:
    from sklearn.metrics import accuracy_score, cohen_kappa_score

    human, judge = rows["human_label"].astype(str), rows["judge_label"].astype(str)
    oi = {label.value for label in OVER_INFERENCE_LABELS}
    human2, judge2 = human.isin(oi), judge.isin(oi)

    def kappa(a: pd.Series, b: pd.Series) -> str:
        value = cohen_kappa_score(a, b)
        return "undefined (one class only)" if pd.isna(value) else f"{value:.3f}"

    annotators = Counter(rows["annotator_id"])
    return {
        "n_labels": len(rows),
        "annotators": [{"id": k, "n": v} for k, v in sorted(annotators.items())],
        "accuracy4": f"{accuracy_score(human, judge):.3f}",
        "kappa4": kappa(human, judge),
        "accuracy2": f"{accuracy_score(human2, judge2):.3f}",
        "kappa2": kappa(human2, judge2),
    }


def _reported_agreement() -> dict[str, str]:
    from mirage_bench.reported import load_reported

    table = load_reported("table11").set_index("metric")
    h3 = load_reported("h3")
    return {
        "n_claims": f"{int(h3[h3.row_type == 'label'].filter(like='judge_').to_numpy().sum()):,}",
        "accuracy4": f"{table.loc['accuracy', 'four_class']:.3f}",
        "kappa4": f"{table.loc['cohen_kappa', 'four_class']:.3f}",
        "accuracy2": f"{table.loc['accuracy', 'binary']:.3f}",
        "kappa2": f"{table.loc['cohen_kappa', 'binary']:.3f}",
    }


def card_context(tables: Sequence[ConfigTable], raw: dict[str, Any]) -> dict[str, Any]:
    """Template variables computed from the tables being published (plus ``raw`` build facts)."""
    from mirage_bench import __version__
    from mirage_bench.reported import PAPER_JUDGE, load_reported, reported_statistic

    by_name = {t.name: t for t in tables}
    configs = []
    for table in tables:
        configs.append(
            {
                "name": table.name,
                "rows": table.num_rows,
                "splits": [f"{s} ({len(f)})" for s, f in table.splits.items()],
                "description": CONFIG_DESCRIPTIONS[table.name],
                "fields": [
                    {
                        "name": n,
                        "type": _type_name(f, config_categories(table.name).get(n)),
                        "doc": FIELD_DOCS[table.name][n],
                    }
                    for n, f in table.features.items()
                ],
            }
        )
    measured = None
    if "judged_claims" in by_name:
        all_claims = by_name["judged_claims"].splits["train"]
        smoke = all_claims["smoke_test"].astype(bool)
        claims = all_claims if smoke.all() else all_claims[~smoke]
        shares = claims["label"].astype(str).value_counts(normalize=True)
        oi_share = sum(shares.get(label.value, 0.0) for label in OVER_INFERENCE_LABELS)
        measured = {
            "smoke_excluded": 0 if smoke.all() else int(smoke.sum()),
            "claims": len(claims),
            "models": claims["model"].nunique(),
            "judges": claims["judge"].nunique(),
            "labels": {
                k: f"{100 * shares.get(k, 0.0):.1f}"
                for k in ("GROUNDED", "INFERRED_REASONABLE", "INFERRED_STEREOTYPE", "FABRICATED")
            },
            "oi": f"{100 * oi_share:.1f}",
            "smoke_only": bool(claims["smoke_test"].all()),
        }
    board = by_name.get("leaderboard")
    if board is not None:
        frame = board.splits["train"]
        n_rep, n_meas = int((frame["source"] == "reported").sum()), int((frame["source"] == "measured").sum())
        n_smoke = int((frame["smoke_test"].astype(bool) & (frame["source"] == "measured")).sum())
        leaderboard_summary = (
            f"{n_rep} row(s) with `source = reported` copied from the paper's Tables 1, 2, 7 and 10 "
            f"(judge `{PAPER_JUDGE}`), and {n_meas} row(s) with `source = measured` computed by this "
            f"package from the published `judged_claims` ({n_smoke} of them from the smoke-test model)."
        )
    else:
        leaderboard_summary = "not built."
    human = _agreement(by_name["human_validation"].splits["train"]) if "human_validation" in by_name else None
    persona_groups = {}
    if "personas" in by_name:
        counts = by_name["personas"].splits["train"]["stereotype_type"].value_counts()
        persona_groups = {group: int(counts.get(group, 0)) for group in STEREOTYPE_TYPES}
    sample_seeds = (
        sorted({int(v) for v in by_name["human_validation"].splits["train"]["sample_seed"]})
        if "human_validation" in by_name
        else []
    )
    return {
        "configs": configs,
        "omitted": raw.get("omitted", []),
        "has_pairs": "preference_pairs" in by_name,
        "package_version": __version__,
        "built_at": raw.get("built_at", ""),
        "repo_hint": raw.get("repo_hint", "DIR"),
        "gated_repo_hint": raw.get("gated_repo_hint"),
        "default_config": next((c["name"] for c in configs if c.get("default")), None),
        "citations": {
            "miragebench": CARD_CITATIONS["miragebench"] % raw.get("repo_hint", "DIR"),
            "memory_aware_rm": CARD_CITATIONS["memory_aware_rm"]
            % (raw.get("gated_repo_hint") or raw.get("repo_hint", "DIR")),
        },
        "n_personas_text": str(by_name["personas"].num_rows) if "personas" in by_name else "the",
        "runs": raw.get("runs", []),
        "leaderboard_summary": leaderboard_summary,
        "measured_stats": measured,
        "paper_judge": PAPER_JUDGE,
        "reported_models": int((load_reported("table1")["row_type"] == "model").sum()),
        "reported_claims": f"{int(reported_statistic('total_claims')):,}",
        "reported_macro_oi": f"{reported_statistic('macro_oi_pct'):.1f}",
        "reported_micro_oi": f"{reported_statistic('micro_oi_pct'):.1f}",
        "persona_groups": persona_groups,
        "sample_seeds": sample_seeds,
        "human": human,
        "reported_agreement": _reported_agreement(),
        "deid": raw.get("deid"),
        "pii_eval": raw.get("pii_eval"),
    }


def build_card(
    tables: Sequence[ConfigTable],
    infos: dict[str, Any],
    raw: dict[str, Any],
    *,
    license: str,
    default_config: str | None = None,
    gated: bool = False,
) -> Any:
    """Render the ``DatasetCard`` for ``tables`` (``infos``: config → ``datasets.DatasetInfo``).

    ``default_config`` gets ``default: true`` (``load_dataset(repo)`` with no config name opens
    it; the first config when it is not among ``tables``). ``gated`` renders the card of the
    sensitive repository: its ``extra_gated_*`` fields customise the access-request form of a repo
    that ``publish`` gates (manual approval).
    """
    from datasets.info import DatasetInfosDict
    from huggingface_hub import DatasetCard, DatasetCardData

    from mirage_bench.paths import cards_dir

    total = sum(t.num_rows for t in tables)
    names = [t.name for t in tables]
    default = default_config if default_config in names else (names[0] if names else None)
    configs = []
    for t in tables:
        entry: dict[str, Any] = {
            "config_name": t.name,
            "data_files": [{"split": s, "path": f"data/{t.name}/{s}-*"} for s in t.splits],
        }
        if t.name == default:
            entry["default"] = True
        configs.append(entry)
    extra: dict[str, Any] = {}
    if gated:
        extra["extra_gated_prompt"] = GATED_PROMPT
        extra["extra_gated_fields"] = {
            "Affiliation": "text",
            "I pledge not to attempt to re-identify any participant or person in the data": "checkbox",
        }
    human = "human_validation" in names or "preference_pairs" in names
    card_data = DatasetCardData(
        pretty_name="MirageBench" + (" preference pairs (gated)" if gated else ""),
        license=license,
        language=["en"],
        annotations_creators=(["expert-generated"] if human else []) + ["machine-generated"],
        language_creators=(["crowdsourced"] if gated else []) + ["expert-generated", "machine-generated"],
        multilinguality=["monolingual"],
        source_datasets=["original"],
        task_categories=["text-classification", "text-generation"],
        task_ids=["multi-class-classification"],
        size_categories=[size_category(total)],
        tags=["over-inference", "personalization", "llm-as-a-judge", "benchmark", "memory"],
        configs=configs,
        **extra,
    )
    DatasetInfosDict(infos).to_dataset_card_data(card_data)
    context = card_context(tables, raw)
    context.update(gated=gated, default_config=default)
    return DatasetCard.from_template(card_data, template_path=str(cards_dir() / "dataset_card.md"), **context)


def eval_yaml(tables: Sequence[ConfigTable]) -> dict[str, Any]:
    """The Hub's ``eval.yaml`` of the benchmark (Eval Results spec: ``name``, ``description``,
    ``evaluation_framework``, ``tasks`` of ``id`` / ``config`` / ``split``; no other task keys).

    The spec has no field for a metric's direction, so the description says it: the
    ``over_inference`` task's score is the OI rate in percent, lower is better.
    """
    names = {t.name for t in tables}
    tasks, scores = [], []
    if "personas" in names:
        tasks.append({"id": "over_inference", "config": "personas", "split": "train"})
        scores.append(
            "over_inference: the OI rate in percent (share of a model's claims about the user judged "
            "INFERRED_STEREOTYPE or FABRICATED, over personas x the six tasks); LOWER is better"
        )
    if any(t.name == "preference_pairs" and "test" in t.splits for t in tables):
        tasks.append({"id": "memory_preference_accuracy", "config": "preference_pairs", "split": "test"})
        scores.append(
            "memory_preference_accuracy: accuracy (percent) of predicting the participant's memory / "
            "no-memory preference on the clear-preference test pairs; higher is better"
        )
    return {
        "name": "MirageBench",
        "description": "Over-inference of personalized LLMs: claims about a user that the user's three "
        "revealed facts do not license. Scores: " + "; ".join(scores) + ".",
        "evaluation_framework": "mirage-bench",
        "tasks": tasks,
    }
