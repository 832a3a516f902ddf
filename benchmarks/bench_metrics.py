"""Measure the full metrics analysis at the paper's scale against a straightforward pandas/loop version.

Run: ``.venv/bin/python benchmarks/bench_metrics.py [--resamples 10000] [--baseline-resamples 200]``.
Prints one table; nothing is asserted.

Input (generated, seed 0): 12 models × 150 personas × 6 tasks = 10,800 records holding exactly the
143,616 claims of the paper's Table 1, each model's claims spread over its 900 records by a
multinomial draw and labelled with that model's Table 1 composition; record-level self-audit OI;
the 400 items of the H.3 confusion matrix; 291 reward comparisons; Accum memories for 12 models ×
2 personas × 8 rounds with planted contradictions.

"Fast" is this package (``mirage_bench.metrics``), every statistic with ``--resamples`` bootstrap
resamples. "Baseline" computes the same numbers the straightforward way: pandas ``groupby`` per
table, and one Python iteration per bootstrap resample (``DataFrame.sample`` of records,
``scipy.stats.spearmanr`` / ``sklearn.metrics.cohen_kappa_score`` per resample). Baseline bootstraps
run ``--baseline-resamples`` iterations and are scaled linearly to ``--resamples`` (marked "×k" in
the table); deterministic statistics are checked equal between the two.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from rich.console import Console
from rich.table import Table
from scipy import stats
from sklearn.metrics import cohen_kappa_score, f1_score, roc_auc_score

from mirage_bench.metrics.accumulation import accumulation_summary, removal_rate, retraction_rate
from mirage_bench.metrics.agreement import agreement, labels_from_confusion, stratified_validation_sample
from mirage_bench.metrics.labels import LABEL_NAMES
from mirage_bench.metrics.oi import bootstrap_oi, model_task_table, oi_summary, stereotype_group_table
from mirage_bench.metrics.reward import reward_accuracy
from mirage_bench.metrics.selfmon import cross_model_spearman, within_model_signal
from mirage_bench.reported import load_reported

TASKS = ("apartment", "rec_letter", "stress_source", "weekend_itinerary", "dating_profile", "birthday_gift")
GROUPS = ("stereotypical", "counter_stereotypical", "neutral")


def generate(seed: int = 0) -> dict[str, Any]:
    """The paper-scale input described in the module docstring."""
    rng = np.random.default_rng(seed)
    t1 = load_reported("table1")
    t1 = t1[t1.row_type == "model"].reset_index(drop=True)
    t2 = load_reported("table2").set_index("model")
    frames = []
    for row in t1.itertuples():
        per_record = rng.multinomial(row.claims, np.full(900, 1 / 900))
        probs = np.array([row.grounded_pct, row.reasonable_pct, row.stereotype_pct, row.fabricated_pct]) / 100
        labels = rng.choice(4, size=row.claims, p=probs / probs.sum())
        record = np.repeat(np.arange(900), per_record)
        frames.append(
            pd.DataFrame(
                {"model": row.model, "persona_id": record // 6, "task_id": record % 6, "label_code": labels}
            )
        )
    claims = pd.concat(frames, ignore_index=True)
    claims["persona_id"] = "p_" + claims.persona_id.astype(str).str.zfill(3)
    claims["stereotype_type"] = np.array(GROUPS)[claims.persona_id.str[2:].astype(int).to_numpy() % 3]
    claims["task_id"] = np.array(TASKS)[claims.task_id.to_numpy()]
    claims["label"] = np.array(LABEL_NAMES)[claims.label_code.to_numpy()]
    claims["record"] = claims.persona_id + "/" + claims.task_id
    claims["claim_index"] = np.arange(len(claims))
    per_record = claims.assign(oi=claims.label_code >= 2).groupby(["model", "record"]).oi.mean().reset_index()
    per_record["self_oi"] = np.clip(per_record.oi + rng.normal(-0.05, 0.15, len(per_record)), 0, 1)
    h3 = load_reported("h3")
    matrix = h3[h3.row_type == "label"].filter(like="judge_").to_numpy()
    predictions, references = labels_from_confusion(matrix)
    human = rng.integers(0, 2, 291)
    p_memory = np.clip(0.5 + (human - 0.5) * rng.uniform(-0.3, 0.9, 291), 0, 1)
    accum = []
    for model in t1.model:
        for persona in ("seed_001", "seed_006"):
            memory: list[str] = []
            for rnd in range(1, 9):
                memory = [e for e in memory if rng.random() > 0.05] + [
                    f"{model}-{persona}-{rnd}-{i}" for i in range(int(rng.integers(2, 16)))
                ]
                accum += [{"model": model, "persona_id": persona, "round": rnd, "entry": e} for e in memory]
    memories = pd.DataFrame(accum)
    checks = pd.DataFrame(
        {
            "model": np.repeat(t1.model.to_numpy(), 2),
            "round": 7,
            "persona_id": ["seed_001", "seed_006"] * 12,
            "previously_stored": rng.random(24) < 0.8,
        }
    )
    checks["retracted"] = checks.previously_stored & (rng.random(24) < 0.1)
    return {
        "claims": claims,
        "records": per_record,
        "table2": t2,
        "families": t1.set_index("model").family,
        "h3": (LABEL_NAMES, predictions, references),
        "reward": (p_memory, human),
        "memories": memories,
        "checks": checks,
    }


class Stage:
    """One group of statistics: the package's call and a straightforward pandas/loop equivalent.

    ``baseline`` returns ``(value, loop_seconds)``: the seconds it spent in per-resample loops of
    ``iterations`` resamples, which ``main`` scales linearly to the package's resample count.
    """

    def __init__(
        self,
        name: str,
        fast: Callable[[], Any],
        baseline: Callable[[int], tuple[Any, float]],
        same: Callable[[Any, Any], bool] | None = None,
    ) -> None:
        self.name, self.fast, self.baseline, self.same = name, fast, baseline, same


def _loop(fn: Callable[[], Any], iterations: int) -> tuple[list[Any], float]:
    start = time.process_time()
    values = [fn() for _ in range(iterations)]
    return values, time.process_time() - start


def stages(data: dict[str, Any], resamples: int) -> list[Stage]:
    """The full analysis as stages (every statistic of issue 4)."""
    c, r, t2 = data["claims"], data["records"], data["table2"]
    _, pred, ref = data["h3"]
    p, h = data["reward"]
    mem = data["memories"]
    fam = data["families"][t2.index]
    rng = np.random.default_rng(0)

    def base_oi(_: int) -> tuple[Any, float]:
        is_oi = c.label.isin(["INFERRED_STEREOTYPE", "FABRICATED"])
        per_model = is_oi.groupby(c.model).mean()
        composition = c.groupby("model").label.value_counts(normalize=True).unstack()
        tables = (
            is_oi.groupby([c.model, c.task_id]).mean().unstack(),
            is_oi.groupby([c.model, c.stereotype_type]).mean().unstack(),
            is_oi.groupby(c.task_id).mean(),
            is_oi.groupby(c.stereotype_type).mean(),
        )
        return (per_model, per_model.mean(), is_oi.mean(), composition, tables), 0.0

    def base_boot(iterations: int) -> tuple[Any, float]:
        rec = (
            c.assign(oi=c.label_code >= 2).groupby(["model", "record"]).oi.agg(["sum", "size"]).reset_index()
        )

        def one() -> pd.Series:
            draw = rec.groupby("model").sample(frac=1.0, replace=True, random_state=rng)
            sums = draw.groupby("model")[["sum", "size"]].sum()
            return sums["sum"] / sums["size"]

        samples, seconds = _loop(one, iterations)
        frame = pd.DataFrame(samples)
        return {m: tuple(np.percentile(frame[m], [2.5, 97.5])) for m in frame.columns}, seconds

    x, y = t2.self_oi_pct.to_numpy(), t2.judge_oi_pct.to_numpy()

    def base_spearman(iterations: int) -> tuple[Any, float]:
        families = fam.to_numpy()
        names = np.unique(families)

        def naive() -> float:
            idx = rng.integers(0, len(x), len(x))
            return stats.spearmanr(x[idx], y[idx]).statistic

        def clustered() -> float:
            sel = np.concatenate([np.flatnonzero(families == f) for f in rng.choice(names, size=len(names))])
            return stats.spearmanr(x[sel], y[sel]).statistic

        a, t_a = _loop(naive, iterations)
        b, t_b = _loop(clustered, iterations)
        perms, t_p = _loop(lambda: stats.spearmanr(rng.permutation(x), y).statistic, iterations * 10)
        return stats.spearmanr(x, y).statistic, t_a + t_b + t_p

    def base_within(_: int) -> tuple[Any, float]:
        return {
            m: (stats.spearmanr(g.self_oi, g.oi).statistic, roc_auc_score(g.oi > g.oi.median(), g.self_oi))
            for m, g in r.groupby("model")
        }, 0.0

    def base_agreement(iterations: int) -> tuple[Any, float]:
        point = (cohen_kappa_score(ref, pred), f1_score(ref, pred, average="macro"))

        def one() -> tuple[float, float]:
            idx = rng.integers(0, len(pred), len(pred))
            return cohen_kappa_score(ref[idx], pred[idx]), cohen_kappa_score(ref[idx] >= 2, pred[idx] >= 2)

        _, seconds = _loop(one, iterations)
        return point, seconds

    def base_sample(_: int) -> tuple[Any, float]:
        return c.groupby("label").sample(100, random_state=42).sample(frac=1.0, random_state=42), 0.0

    def base_reward(iterations: int) -> tuple[Any, float]:
        correct = ((p > 0.5) == (h == 1)).astype(float) + 0.5 * (p == 0.5)
        order = np.argsort(-np.abs(p - 0.5), kind="stable")
        selective = {
            cov: correct[order][: int(np.ceil(cov * len(p)))].mean() for cov in (0.25, 0.5, 0.75, 1.0)
        }
        _, seconds = _loop(lambda: correct[rng.integers(0, len(p), len(p))].mean(), iterations)
        return (correct.mean(), selective), seconds

    def base_accum(_: int) -> tuple[Any, float]:
        sets = {k: set(g.entry) for k, g in mem.groupby(["model", "persona_id", "round"])}
        removal: dict[tuple[str, str], list[float]] = {}
        for (model, persona, rnd), entries in sets.items():
            nxt = sets.get((model, persona, rnd + 1))
            if nxt is not None and entries:
                removal.setdefault((model, persona), []).append(len(entries - nxt) / len(entries))
        rates = pd.Series({k: np.mean(v) for k, v in removal.items()}).groupby(level=0).mean()
        counts = mem.groupby(["model", "persona_id", "round"]).size().reset_index(name="n")
        fits = {m: stats.linregress(g["round"], g["n"]) for m, g in counts.groupby("model")}
        return (rates, fits), 0.0

    counts = mem.groupby(["model", "persona_id", "round"]).size().rename("n_attributes").reset_index()
    return [
        Stage(
            "OI summary, composition, Tables 3/7/10",
            lambda: (
                oi_summary(c.label, models=c.model, tasks=c.task_id, groups=c.stereotype_type),
                model_task_table(c),
                stereotype_group_table(c),
            ),
            base_oi,
            lambda f, b: (
                np.allclose([f[0]["per_model"][m]["oi_rate"] for m in b[0].index], b[0].to_numpy())
                and np.isclose(f[0]["macro_oi_rate"], b[1])
                and np.isclose(f[0]["micro_oi_rate"], b[2])
            ),
        ),
        Stage(
            "OI record bootstrap (per model, macro, micro)",
            lambda: bootstrap_oi(c.label, c.record, models=c.model, n_resamples=resamples),
            base_boot,
        ),
        Stage(
            "cross-model Spearman: permutation p, naive + clustered CI",
            lambda: cross_model_spearman(
                t2.self_oi_pct,
                t2.judge_oi_pct,
                families=fam,
                n_resamples=resamples,
                n_permutations=10 * resamples,
            ),
            base_spearman,
            lambda f, b: np.isclose(f["rho"], b),
        ),
        Stage(
            "within-model Spearman + AUROC (Table 6)",
            lambda: within_model_signal(r.self_oi, r.oi, r.model),
            base_within,
            lambda f, b: np.allclose(
                f.set_index("model").loc[list(b)][["spearman_rho", "auroc"]].to_numpy(),
                np.array(list(b.values())),
            ),
        ),
        Stage(
            "judge agreement + kappa bootstrap",
            lambda: agreement(pred, ref, n_resamples=resamples),
            base_agreement,
            lambda f, b: np.allclose([f["kappa"], f["macro_f1"]], b),
        ),
        Stage("H.1 stratified validation sample", lambda: stratified_validation_sample(c), base_sample),
        Stage(
            "reward accuracy + selective + bootstrap",
            lambda: reward_accuracy(p, h, n_resamples=resamples),
            base_reward,
            lambda f, b: (
                np.isclose(f["accuracy"], b[0])
                and all(np.isclose(f["selective_accuracy"][k], v) for k, v in b[1].items())
            ),
        ),
        Stage(
            "Accum growth, OLS, removal, retraction",
            lambda: (accumulation_summary(counts), removal_rate(mem), retraction_rate(data["checks"])),
            base_accum,
            lambda f, b: np.allclose(
                f[1].set_index("model").removal_rate.loc[b[0].index].to_numpy(), b[0].to_numpy()
            ),
        ),
    ]


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def _cpu_timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    """``(value, CPU seconds of this process, wall seconds)``; CPU time is what a shared machine's
    load does not inflate."""
    cpu, wall = time.process_time(), time.perf_counter()
    value = fn()
    return value, time.process_time() - cpu, time.perf_counter() - wall


def main() -> None:
    """Generate the input, run both implementations stage by stage, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--baseline-resamples", type=int, default=200)
    args = parser.parse_args()
    data, t_gen = _timed(generate)
    n_records = data["claims"][["model", "record"]].drop_duplicates().shape[0]
    console = Console()
    console.print(
        f"input: {len(data['claims']):,} claims in {n_records:,} records (generated in {t_gen:.2f} s); "
        f"{args.resamples:,} bootstrap resamples, {10 * args.resamples:,} permutations; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    scale = args.resamples / args.baseline_resamples
    table = Table(title="metrics: full analysis at the paper's scale (12 models, 143,616 claims)")
    columns = (
        "stage",
        "fast CPU (s)",
        "fast wall (s)",
        "baseline CPU (s)",
        "baseline / fast",
        "same numbers",
    )
    for col in columns:
        table.add_column(col, justify="left" if col == "stage" else "right")
    total_cpu = total_wall = total_base = 0.0
    for stage in stages(data, args.resamples):
        stage.fast()  # warm caches (first-call imports)
        fast_value, cpu, wall = _cpu_timed(stage.fast)
        (base_value, loop_seconds), base_cpu, _ = _cpu_timed(
            lambda st=stage: st.baseline(args.baseline_resamples)
        )
        base_scaled = base_cpu + (scale - 1) * loop_seconds
        total_cpu, total_wall, total_base = total_cpu + cpu, total_wall + wall, total_base + base_scaled
        same = "" if stage.same is None else ("yes" if stage.same(fast_value, base_value) else "NO")
        note = f" (×{scale:.0f})" if loop_seconds else ""
        table.add_row(
            stage.name,
            f"{cpu:.3f}",
            f"{wall:.3f}",
            f"{base_scaled:.2f}{note}",
            f"{base_scaled / cpu:.1f}×",
            same,
        )
    table.add_row(
        "full analysis",
        f"{total_cpu:.3f}",
        f"{total_wall:.3f}",
        f"{total_base:.1f}",
        f"{total_base / total_cpu:.0f}×",
        "",
    )
    console.print(table)
    console.print(
        f"(×{scale:.0f}: the baseline's per-resample loops ran {args.baseline_resamples} resamples and are "
        f"scaled linearly to {args.resamples:,}; bootstrap CIs are random and not compared. CPU time is "
        "this process's; wall time also counts waiting for a core on a shared machine.)"
    )


if __name__ == "__main__":
    main()
