"""Accum statistics: growth (Eq. 4), OLS slope and R², removal rate, and retraction rate.

Inputs are long tables, one row per observation, so that every statistic is a grouped vector
operation (pandas ``groupby`` sums and one merge), never a loop over attributes:

* ``counts``: ``model, persona_id, round, n_attributes`` (inferred attributes stored after the round);
* ``memories``: ``model, persona_id, round, entry`` (one row per stored inferred entry);
* ``checks``: ``model, persona_id, round, previously_stored, retracted`` (planted contradictions).

:func:`accum_frames` builds the three from ``accum.jsonl`` records. Any extra grouping column (e.g.
``condition``, the memory prompt) can be added to ``by``.

Definitions (Appendix B, F): per group, ``r_first`` / ``r_last`` are the mean stored counts at the
first / last round (averaged over personas); Growth = r_last − r_first and the per-round rate of
Eq. (4) is Growth / (last − first round), both computed per persona and averaged so that a persona
that stopped early does not bias them (identical to Eq. 4 when every persona completes); slope,
intercept and R² come from the OLS fit of count on round over all (persona, round) observations
(Table 8: n = 16 for 2 personas × 8 rounds), the slope taken within personas. The
removal rate (App. F: "the fraction of unique attributes present at round T that are absent at
round T+1, averaged") is, per persona, the mean over rounds T (with T and T+1 both observed, their
memories stored, and a non-empty inferred memory at T) of the share of unique inferred entries
present at T and absent at T+1, then averaged over personas. This module is the only
implementation: ``summary.json``, ``mirage-bench report`` and the Space call it.
Beyond the paper, the retraction rate is the share of planted contradictions whose
contradicted inference was stored before the contradicting round and is gone after it.

>>> counts = pd.DataFrame({"model": "m", "persona_id": "p", "round": [1, 2, 3], "n_attributes": [2, 4, 6]})
>>> row = accumulation_summary(counts).iloc[0]
>>> float(row.growth), float(row.per_round), float(row.slope), float(row.r2)
(4.0, 2.0, 2.0, 1.0)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

#: Memory fields that hold what the user said (not inferred); excluded from inferred counts.
OBSERVED_FIELDS: frozenset[str] = frozenset({"observed", "directly_observed"})


def _check_columns(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} table lacks column(s) {missing}")


def accumulation_summary(
    counts: pd.DataFrame, *, by: Sequence[str] = ("model",), value_column: str = "n_attributes"
) -> pd.DataFrame:
    """Per group: ``n_personas``, ``n_obs``, ``n_truncated``, ``first_round``, ``last_round``,
    ``r_first``, ``r_last``, ``growth``, ``per_round`` (Eq. 4), ``slope``, ``intercept``, ``r2``.

    ``r_first`` / ``r_last`` are the mean counts at the group's first / last round over the personas
    observed there (Table 4's R1 / R8). ``growth`` and ``per_round`` are computed per persona over
    the rounds it reached, then averaged over personas (each persona's ``last − first`` and
    ``(last − first) / (last round − first round)``): with every persona complete this is exactly
    Eq. 4, ``(R_T − R_1) / (T − 1)``, and a persona that stopped early (Accum stops at the first
    failed round; counted in ``n_truncated``) cannot pull the rate toward the gap between persona
    levels. ``slope`` is the OLS slope of count on round within personas (persona-demeaned), which
    equals the pooled OLS slope of Table 8 when every persona has the same rounds; ``intercept`` and
    ``r2`` are those of the line ``intercept + slope · round`` through the pooled means, over all
    (persona, round) observations (the pooled OLS fit on complete data). ``r2`` is NaN when the
    counts do not vary; ``slope`` is NaN with a single observed round. A missing round or count is
    an error (``ValueError``), never dropped silently.
    """
    keys = list(by)
    _check_columns(counts, [*keys, "persona_id", "round", value_column], "counts")
    frame = counts[[*keys, "persona_id", "round", value_column]]
    missing = frame[frame[["round", value_column]].isna().any(axis=1)]
    if not missing.empty:
        where = ", ".join(f"{r.persona_id} round {r.round}" for r in missing.head(5).itertuples())
        raise ValueError(f"{len(missing)} Accum observation(s) with a missing round or count ({where}); "
                         "drop or fill them explicitly")
    persona = [*keys, "persona_id"]
    frame = frame.assign(x=frame["round"].astype(float), y=frame[value_column].astype(float))
    frame = frame.sort_values([*persona, "x"], kind="stable")
    per = frame.groupby(persona, sort=True).agg(x_first=("x", "first"), x_last=("x", "last"),
                                                y_first=("y", "first"), y_last=("y", "last"),
                                                x_mean=("x", "mean"), y_mean=("y", "mean"))
    work = frame.merge(per[["x_mean", "y_mean"]], left_on=persona, right_index=True)
    dx = work.x - work.x_mean
    work = work.assign(sxx=dx * dx, sxy=dx * (work.y - work.y_mean), one=1.0)
    sums = work.groupby(keys, sort=True)[["x", "y", "sxx", "sxy", "one"]].sum()
    n = sums["one"]
    out = pd.DataFrame(index=sums.index)
    out["n_personas"] = per.groupby(keys, sort=True).size()
    out["n_obs"] = n.astype(int)
    out["first_round"] = per.groupby(keys, sort=True)["x_first"].min().astype(int)
    out["last_round"] = per.groupby(keys, sort=True)["x_last"].max().astype(int)
    bounds = work.merge(out[["first_round", "last_round"]], left_on=keys, right_index=True)
    out["r_first"] = bounds[bounds.x == bounds.first_round].groupby(keys, sort=True)["y"].mean()
    out["r_last"] = bounds[bounds.x == bounds.last_round].groupby(keys, sort=True)["y"].mean()
    per = per.merge(out[["last_round"]], left_on=keys, right_index=True)
    out["n_truncated"] = (per.x_last < per.last_round).groupby(keys, sort=True).sum().astype(int)
    span = per.x_last - per.x_first
    per = per.assign(growth=per.y_last - per.y_first,
                     per_round=(per.y_last - per.y_first) / span.where(span > 0))
    out["growth"] = per.groupby(keys, sort=True)["growth"].mean()
    out["per_round"] = per.groupby(keys, sort=True)["per_round"].mean()
    out["slope"] = sums.sxy / sums.sxx.where(sums.sxx > 0)
    out["intercept"] = (sums.y - out.slope * sums.x) / n
    fit = work.merge(out[["slope", "intercept"]].assign(y_bar=sums.y / n), left_on=keys, right_index=True)
    fit = fit.assign(sse=(fit.y - fit.intercept - fit.slope * fit.x) ** 2, sst=(fit.y - fit.y_bar) ** 2)
    errors = fit.groupby(keys, sort=True)[["sse", "sst"]].sum()
    out["r2"] = 1 - errors.sse / errors.sst.where(errors.sst > 1e-12)
    return out.reset_index()


def mean_by_round(counts: pd.DataFrame, *, value_column: str = "n_attributes") -> dict[int, float]:
    """Mean count per round over the personas observed at that round (one group's counts).

    >>> mean_by_round(pd.DataFrame({"persona_id": ["a", "b", "a"], "round": [1, 1, 2],
    ...                             "n_attributes": [1, 3, 4]}))
    {1: 2.0, 2: 4.0}
    """
    means = counts.groupby("round", sort=True)[value_column].mean()
    return {int(r): float(v) for r, v in means.items()}


def normalise_entry(text: str) -> str:
    """Case- and whitespace-normalised memory entry (how entries are compared across rounds).

    >>> normalise_entry("  Urban   Professional lifestyle")
    'urban professional lifestyle'
    """
    return " ".join(str(text).split()).casefold()


def removal_rate(memories: pd.DataFrame, *, by: Sequence[str] = ("model",),
                 observed_rounds: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per group: ``removal_rate`` (see the module docstring), ``n_personas``, ``n_transitions``.

    ``memories`` holds one row per stored entry (``entry`` text, compared after
    :func:`normalise_entry`). A round whose memory is empty has no rows; pass
    ``observed_rounds`` (``by`` columns, ``persona_id``, ``round``: every round that was observed)
    so that such rounds still count as observed: entries present at T and absent from an observed,
    empty T+1 are removals. Without it, the observed rounds are those with at least one entry.
    """
    keys = [*by, "persona_id"]
    _check_columns(memories, [*keys, "round", "entry"], "memories")
    entries = memories[[*keys, "round"]].assign(entry=memories["entry"].map(normalise_entry))
    entries = entries.drop_duplicates()
    rounds = (observed_rounds[[*keys, "round"]] if observed_rounds is not None else entries[[*keys, "round"]])
    rounds = rounds.drop_duplicates()
    following = rounds.assign(round=rounds["round"] - 1, _next_observed=True)
    current = entries.merge(following, on=[*keys, "round"], how="inner")  # T with T+1 observed
    nxt = entries.assign(round=entries["round"] - 1, _kept=True)
    merged = current.merge(nxt, on=[*keys, "round", "entry"], how="left")
    merged["_removed"] = merged["_kept"].isna()
    per_round = merged.groupby([*keys, "round"], sort=True)["_removed"].mean()
    per_persona = per_round.groupby(keys, sort=True).mean()
    out = per_persona.groupby(list(by), sort=True).agg(["mean", "size"])
    out.columns = ["removal_rate", "n_personas"]
    out["n_transitions"] = per_round.groupby(list(by), sort=True).size()
    return out.reset_index()


def retraction_rate(checks: pd.DataFrame, *, by: Sequence[str] = ("model",)) -> pd.DataFrame:
    """Per group: ``n_contradictions``, ``n_stored`` (the contradicted inference was in memory
    before the round), ``n_retracted``, ``stored_rate`` and ``retraction_rate`` = retracted / stored
    (NaN when nothing was stored).

    >>> checks = pd.DataFrame({"model": "m", "persona_id": ["a", "b", "c"], "round": 7,
    ...                        "previously_stored": [True, True, False], "retracted": [False, True, None]})
    >>> float(retraction_rate(checks).retraction_rate.iloc[0])
    0.5
    """
    _check_columns(checks, [*by, "previously_stored", "retracted"], "checks")
    stored = checks["previously_stored"].astype(bool)
    retracted = checks["retracted"].astype("boolean").fillna(False).astype(bool) & stored
    work = checks[list(by)].assign(one=1, stored=stored.astype(int), retracted=retracted.astype(int))
    sums = work.groupby(list(by), sort=True).sum()
    out = pd.DataFrame({"n_contradictions": sums.one, "n_stored": sums.stored, "n_retracted": sums.retracted})
    out["stored_rate"] = out.n_stored / out.n_contradictions
    out["retraction_rate"] = out.n_retracted / out.n_stored.where(out.n_stored > 0)
    return out.reset_index()


def accum_frames(records: Iterable[Mapping[str, Any]]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame,
                                                                   pd.DataFrame]:
    """``(counts, memories, checks, observed_rounds)`` from ``accum.jsonl`` records (as dicts).

    Only rounds with ``status == "ok"`` count; ``observed_rounds`` (the rounds the removal rate
    compares) holds only those whose memory was stored, so a round with no stored memory is never
    read as the removal of every entry. Inferred entries are those outside the
    ``observed`` field; ``n_attributes`` is the number of distinct normalised inferred entries
    (the record's ``n_inferred`` is not trusted blindly: it is recomputed from the stored memory
    where a memory is present). Every table carries ``model``, ``condition``, ``persona_id``,
    ``round``.
    """
    counts, entries, checks, observed = [], [], [], []
    for record in records:
        base = {"model": record["model"], "condition": record.get("condition", ""),
                "persona_id": record["persona_id"]}
        for rnd in record.get("rounds") or []:
            if rnd.get("status") != "ok":
                continue
            key = {**base, "round": int(rnd["round"])}
            memory = rnd.get("memory")
            if memory is not None:
                observed.append(key)  # a round whose memory was not stored is not a removal
                inferred = {normalise_entry(e) for field, values in memory.items()
                            if field not in OBSERVED_FIELDS for e in values}
                entries.extend({**key, "entry": e} for e in sorted(inferred))
                counts.append({**key, "n_attributes": len(inferred)})
            else:
                counts.append({**key, "n_attributes": int(rnd.get("n_inferred", 0))})
            # current records hold a list; records written before several-per-round hold one dict
            legacy = [rnd["contradiction"]] if rnd.get("contradiction") else []
            planted = rnd.get("contradictions") or legacy
            for check in planted:
                checks.append({**key, "attribute": check.get("attribute"),
                               "contradicts": check.get("contradicts"),
                               "previously_stored": bool(check.get("previously_stored")),
                               "retracted": check.get("retracted")})
    columns = ["model", "condition", "persona_id", "round"]
    return (pd.DataFrame(counts, columns=[*columns, "n_attributes"]),
            pd.DataFrame(entries, columns=[*columns, "entry"]),
            pd.DataFrame(checks, columns=[*columns, "attribute", "contradicts", "previously_stored",
                                          "retracted"]),
            pd.DataFrame(observed, columns=columns))


def accumulation_report(records: Iterable[Mapping[str, Any]],
                        by: Sequence[str] = ("model", "condition")) -> pd.DataFrame:
    """Table 4 + Table 8 + retraction, one row per ``by`` group, from ``accum.jsonl`` records."""
    counts, memories, checks, observed = accum_frames(records)
    if counts.empty:
        raise ValueError("no successful Accum rounds to summarise")
    out = accumulation_summary(counts, by=by)
    out = out.merge(removal_rate(memories, by=by, observed_rounds=observed), on=list(by), how="left",
                    suffixes=("", "_removal"))
    if not checks.empty:
        out = out.merge(retraction_rate(checks, by=by), on=list(by), how="left")
    return out.drop(columns=[c for c in out.columns if c.endswith("_removal")])
