"""Matplotlib figures for the Space: imagination gradient, Self-Monitoring Inversion, stereotype gap,
Accum growth, and reward-model selective accuracy. matplotlib is imported lazily (extra ``space``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mirage_bench.leaderboard.board import TASK_ORDER, TASK_TITLES


def _figure(width: float = 6.4, height: float = 4.0) -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, fig.add_subplot()


def _empty(message: str) -> Any:
    fig, ax = _figure(6.4, 2.0)
    ax.axis("off")
    ax.text(0.5, 0.5, message, ha="center", va="center", wrap=True)
    return fig


def imagination_gradient(board: pd.DataFrame) -> Any:
    """OI % by task (least groundable first): one line per model plus the mean across models."""
    cols = [f"{t}_oi_pct" for t in TASK_ORDER]
    frame = board.dropna(subset=[c for c in cols if c in board], how="all")
    if frame.empty or not set(cols) <= set(board.columns):
        return _empty("No per-task OI for this selection.")
    fig, ax = _figure()
    x = np.arange(len(TASK_ORDER))
    for _, row in frame.iterrows():
        ax.plot(x, row[cols].to_numpy(dtype=float), color="0.75", lw=1)
    ax.plot(
        x,
        frame[cols].astype(float).mean().to_numpy(),
        color="C3",
        lw=2.5,
        marker="o",
        label=f"mean of {len(frame)} model(s)",
    )
    ax.set_xticks(x, [TASK_TITLES[t] for t in TASK_ORDER], rotation=20)
    ax.set_ylabel("OI %")
    ax.set_title("Imagination gradient (grey: one line per model)")
    ax.legend()
    return fig


def self_monitoring_inversion(
    board: pd.DataFrame, *, n_resamples: int = 2000, seed: int = 0
) -> tuple[Any, str]:
    """Self-audit OI vs judge OI per model, with Spearman ρ and its bootstrap 95% CI (resampling models)."""
    frame = board.dropna(subset=["self_oi_pct", "oi_pct"]) if "self_oi_pct" in board else board.iloc[:0]
    if len(frame) < 3:
        return _empty("Needs self-audit and judge OI for at least 3 models."), ""
    from mirage_bench.metrics.selfmon import cross_model_spearman

    stats = cross_model_spearman(
        frame["self_oi_pct"].to_numpy(float),
        frame["oi_pct"].to_numpy(float),
        n_resamples=n_resamples,
        seed=seed,
    )
    rho, (low, high) = stats["rho"], stats["ci"]
    fig, ax = _figure()
    ax.scatter(frame["self_oi_pct"], frame["oi_pct"], color="C0")
    lim = [
        min(frame["self_oi_pct"].min(), frame["oi_pct"].min()) - 3,
        max(frame["self_oi_pct"].max(), frame["oi_pct"].max()) + 3,
    ]
    ax.plot(lim, lim, ls="--", color="0.6", lw=1, label="self = judge")
    ax.set_xlabel("Self-audit OI %")
    ax.set_ylabel("Judge OI %")
    _label_points(ax, frame["self_oi_pct"], frame["oi_pct"], frame["model"].astype(str))
    ax.set_title(f"Spearman ρ = {rho:+.2f}, 95% CI [{low:+.2f}, {high:+.2f}], n = {len(frame)}")
    ax.legend(loc="lower right")
    sources = ", ".join(sorted(frame["source"].unique()))
    text = (
        f"**Self-Monitoring Inversion** ({sources} rows, n = {len(frame)}): Spearman ρ = {rho:+.2f}, "
        f"bootstrap 95% CI [{low:+.2f}, {high:+.2f}], permutation p = {stats['p_value']:.3f} — computed "
        "here from the rows shown."
    )
    return fig, text


#: Label positions tried in turn (offset in points, horizontal alignment) until one overlaps nothing.
_LABEL_SPOTS = (((4, 3), "left"), ((4, -9), "left"), ((-4, 3), "right"), ((-4, -9), "right"),
                ((4, 11), "left"), ((-4, 11), "right"), ((4, -17), "left"), ((-4, -17), "right"))


def _label_points(ax: Any, xs: Any, ys: Any, names: Any) -> None:
    """Name each point, moving a label around its point until it overlaps no earlier label."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    ax.figure.draw_without_rendering()  # settle the constrained layout first
    renderer = FigureCanvasAgg(ax.figure).get_renderer()
    placed: list[Any] = []
    for x, y, name in sorted(zip(xs, ys, names, strict=True), key=lambda t: (-t[1], t[0])):
        for offset, ha in _LABEL_SPOTS:
            text = ax.annotate(name, (x, y), xytext=offset, textcoords="offset points", fontsize=7, ha=ha)
            box = text.get_window_extent(renderer)
            if not any(box.overlaps(other) for other in placed):
                break
            text.remove()
        else:  # every spot is taken: keep the first one
            offset = _LABEL_SPOTS[0][0]
            text = ax.annotate(name, (x, y), xytext=offset, textcoords="offset points", fontsize=7)
            box = text.get_window_extent(renderer)
        placed.append(box)


def stereotype_gap(board: pd.DataFrame) -> Any:
    """OI on stereotypical vs counter-stereotypical personas per model (the gap in pp)."""
    need = ["stereotypical_oi_pct", "counter_stereotypical_oi_pct"]
    frame = board.dropna(subset=need) if set(need) <= set(board.columns) else board.iloc[:0]
    if frame.empty:
        return _empty("No stereotype-group OI for this selection.")
    frame = frame.assign(gap=frame[need[0]] - frame[need[1]]).sort_values("gap")
    fig, ax = _figure(6.4, max(3.0, 0.3 * len(frame) + 1))
    y = np.arange(len(frame))
    ax.barh(y, frame["gap"], color="C1")
    ax.set_yticks(y, frame["model"].astype(str), fontsize=8)
    ax.axvline(0, color="0.3", lw=1)
    ax.set_xlabel("Stereotypical − counter-stereotypical OI (pp)")
    ax.set_title("Stereotype gap by model")
    return fig


def accum_curves(
    store_root: Path | None, run_dirs: Iterable[Path] = (), *, include_smoke: bool = False
) -> pd.DataFrame:
    """Per (model, persona, round) inferred attributes in memory (``n_inferred`` of ``accum.jsonl``).

    Only the main (retention-biased) condition; the prune-permitting control is skipped, and so are
    records of a smoke-test model (``smoke_test``) unless ``include_smoke``.
    """
    rows = []
    dirs = list(run_dirs)
    if store_root is not None:
        dirs += sorted(p.parent for p in (Path(store_root) / "results").glob("*/accum.jsonl"))
    for run_dir in dirs:
        path = Path(run_dir) / "accum.jsonl"
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            rec = json.loads(line)
            if "prune" in str(rec.get("condition", "")):
                continue  # the prune-permitting control is a different experiment
            if rec.get("smoke_test") and not include_smoke:
                continue  # a smoke-test model's curve is not a measurement
            for rnd in rec.get("rounds") or []:
                if rnd.get("status", "ok") != "ok":
                    continue
                count = rnd.get("n_inferred", rnd.get("n_stored"))
                if count is None and isinstance(rnd.get("stored"), list):
                    count = len(rnd["stored"])
                if count is not None:
                    rows.append(
                        {
                            "model": rec.get("model", ""),
                            "persona_id": rec.get("persona_id", ""),
                            "round": int(rnd.get("round", 0)),
                            "attributes": float(count),
                        }
                    )
    return pd.DataFrame(rows, columns=["model", "persona_id", "round", "attributes"])


def accum_growth(curves: pd.DataFrame) -> Any:
    """Accum growth curves (mean attributes in memory per round, per model), when measured data exists."""
    if curves.empty:
        return _empty(
            "No measured Accum data yet (run `mirage-bench run --stages accum`). The paper's Table 4 "
            "prints only rounds 1 and 8."
        )
    fig, ax = _figure()
    for model, part in curves.groupby("model"):
        mean = part.groupby("round")["attributes"].mean()
        ax.plot(mean.index, mean.to_numpy(), marker="o", label=str(model))
    ax.set_xlabel("Round")
    ax.set_ylabel("Inferred attributes in memory (mean over personas)")
    ax.set_title("Accum growth (measured)")
    ax.legend(fontsize=7)
    return fig


def reward_summary(path: Path) -> tuple[str, Any]:
    """Markdown summary and selective-accuracy curve of one scored pair set (JSONL).

    A file that is not a valid scored pair set gets a message naming the bad line (no figure); a set
    named ``smoke_*`` or ``*synthetic_*`` (see :func:`mirage_bench.reward.evaluation.write_scored_sets`)
    opens with a banner saying that its numbers are not results.
    """
    from mirage_bench.metrics.reward import reward_accuracy
    from mirage_bench.reward.data import DataError, ScoredPair, read_jsonl

    name = Path(path).name
    try:
        rows = read_jsonl(path, ScoredPair)
    except DataError as exc:
        return f"`{name}` is not a valid scored pair set: {exc}", None
    if not rows:
        return f"`{name}` holds no pairs.", None
    p = np.array([r.p_memory for r in rows], dtype=float)
    y = np.array([int(r.human_prefers_memory) for r in rows])
    result = reward_accuracy(p, y)
    selective = result["selective_accuracy"]
    fig, ax = _figure(5.5, 3.5)
    cov = sorted(float(c) for c in selective)
    ax.plot([100 * c for c in cov], [100 * selective[c] for c in cov], marker="o")
    ax.axhline(100 * result["majority_baseline"], ls="--", color="0.5", label="majority baseline")
    ax.set_xlabel("Coverage % (most confident pairs first)")
    ax.set_ylabel("Accuracy %")
    ax.set_title("Selective accuracy")
    ax.legend()
    banner = ""
    if name.startswith("smoke_") or "synthetic_" in name:
        banner = (
            "**SMOKE TEST / SYNTHETIC set: these numbers only show that the pipeline runs; they are not "
            "results about any model or people.**\n\n"
        )
    md = banner + (
        f"**{name}**: {len(rows)} pairs · accuracy {100 * result['accuracy']:.1f}% · majority "
        f"baseline {100 * result['majority_baseline']:.1f}% · "
        f"picks memory {100 * result['memory_selection_rate']:.1f}%"
        f" vs humans {100 * result['human_memory_rate']:.1f}% (measured from this file)"
    )
    return md, fig
