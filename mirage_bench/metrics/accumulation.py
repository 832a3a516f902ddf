"""Accum statistics: growth (Eq. 4), OLS slope and R², removal rate, and retraction rate.

Inputs are long tables, one row per observation, so that every statistic is a grouped vector
operation (pandas ``groupby`` sums and one merge), never a loop over attributes:

* ``counts``: ``model, persona_id, round, n_attributes`` (inferred attributes stored after the round);
* ``memories``: ``model, persona_id, round, entry`` (one row per stored inferred entry);
* ``checks``: ``model, persona_id, round, previously_stored, retracted`` (planted contradictions).

:func:`accum_frames` builds the three from ``accum.jsonl`` records. Any extra grouping column (e.g.
``condition``, the memory prompt) can be added to ``by``.

Definitions (Appendix B, F): per group, ``r_first`` / ``r_last`` are the mean stored counts at the
first / last round (averaged over personas); Growth = r_last − r_first; the per-round rate of
Eq. (4) is Growth / (last − first round); slope, intercept and R² come from one OLS fit of count on
round over all (persona, round) observations (Table 8: n = 16 for 2 personas × 8 rounds). The
removal rate is, per persona, the mean over rounds T (with T and T+1 both observed and a non-empty
memory at T) of the share of unique entries present at T and absent at T+1, then averaged over
personas. Beyond the paper, the retraction rate is the share of planted contradictions whose
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
    """Per group: ``n_personas``, ``n_obs``, ``first_round``, ``last_round``, ``r_first``, ``r_last``,
    ``growth``, ``per_round`` (Eq. 4), ``slope``, ``intercept``, ``r2`` (OLS over all observations).

    ``r2`` is NaN when the counts do not vary; ``slope`` is NaN with a single observed round.
    """
    keys = list(by)
    _check_columns(counts, [*keys, "persona_id", "round", value_column], "counts")
    frame = counts[[*keys, "persona_id", "round", value_column]].dropna()
    x = frame["round"].astype(float)
    y = frame[value_column].astype(float)
    work = frame[keys].assign(x=x, y=y, xx=x * x, xy=x * y, yy=y * y, one=1.0)
    sums = work.groupby(keys, sort=True).sum()
    n = sums["one"]
    sxx = sums.xx - sums.x**2 / n
    sxy = sums.xy - sums.x * sums.y / n
    syy = sums.yy - sums.y**2 / n
    out = pd.DataFrame(index=sums.index)
    out["n_personas"] = frame.groupby(keys, sort=True)["persona_id"].nunique()
    out["n_obs"] = n.astype(int)
    bounds = frame.groupby(keys, sort=True)["round"].agg(["min", "max"])
    out["first_round"], out["last_round"] = bounds["min"], bounds["max"]
    at = frame.merge(bounds, left_on=keys, right_index=True)
    out["r_first"] = at[at["round"] == at["min"]].groupby(keys, sort=True)[value_column].mean()
    out["r_last"] = at[at["round"] == at["max"]].groupby(keys, sort=True)[value_column].mean()
    out["growth"] = out.r_last - out.r_first
    span = (out.last_round - out.first_round).astype(float)
    out["per_round"] = out.growth / span.where(span > 0)
    out["slope"] = sxy / sxx.where(sxx > 0)
    out["intercept"] = (sums.y - out.slope * sums.x) / n
    out["r2"] = sxy**2 / (sxx * syy).where((sxx > 0) & (syy > 0))
    return out.reset_index()


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

    Only rounds with ``status == "ok"`` count as observed. Inferred entries are those outside the
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
            observed.append(key)
            memory = rnd.get("memory")
            if memory is not None:
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
