"""The other side of the over-inference trade-off: how much a model says about the user.

By Eq. 1 of the paper, OI = (#Stereotype + #Fabricated) / #claims, so a response that makes no claim
about the user, or only restates the revealed facts, has no over-inference; eliminating
over-inference by not personalizing looks perfect on OI alone. These counts put it beside OI:

* **claims per response**: judged claims about the user per judged response (responses the judge
  found no claim in count, with 0 claims);
* **faithful claims per response**: Grounded + Reasonable claims (the two faithful classes of the
  taxonomy, Figure 2) per judged response.

A model that personalizes faithfully has a low OI *and* a high faithful-claims rate; saying nothing
gives OI "0" (or none) with ~0 faithful claims per response.

>>> claim_yield(["GROUNDED", "FABRICATED", "INFERRED_REASONABLE", "INFERRED_STEREOTYPE"], 2)
{'n_responses': 2, 'n_claims': 4, 'claims_per_response': 2.0, 'faithful_per_response': 1.0}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mirage_bench.metrics.labels import encode_labels

#: Label codes of the faithful classes (Grounded, Reasonable).
FAITHFUL_CODES: tuple[int, int] = (0, 1)


def claim_yield(labels: Sequence[Any] | np.ndarray, n_responses: int) -> dict[str, Any]:
    """Claims and faithful (Grounded + Reasonable) claims per judged response.

    ``labels`` holds one label per judged claim; ``n_responses`` is the number of responses that
    were judged (status ok), including those with no claim. Rates are ``nan`` when
    ``n_responses`` is 0.
    """
    if n_responses < 0:
        raise ValueError(f"n_responses must be >= 0, got {n_responses}")
    codes = encode_labels(labels)
    faithful = int(np.isin(codes, FAITHFUL_CODES).sum())
    n_claims = int(codes.size)
    per = (lambda x: x / n_responses) if n_responses else (lambda x: float("nan"))
    return {
        "n_responses": int(n_responses),
        "n_claims": n_claims,
        "claims_per_response": float(per(n_claims)),
        "faithful_per_response": float(per(faithful)),
    }


def reported_claim_yield(
    n_claims: float, grounded_pct: float, reasonable_pct: float, n_responses: int = 900
) -> dict[str, float]:
    """The same two rates from a published table row: its claim count, its Grounded % and
    Reasonable %, and the paper's 900 instances per model (150 personas x 6 tasks, §4).

    Derived from reported numbers (the published percentages are rounded to 0.1 pp), not measured.

    >>> r = reported_claim_yield(12687, 23.6, 27.7)  # Qwen3-8B, Table 1
    >>> round(r["claims_per_response"], 2), round(r["faithful_per_response"], 2)
    (14.1, 7.23)
    """
    if n_responses <= 0:
        raise ValueError("n_responses must be positive")
    return {
        "claims_per_response": float(n_claims) / n_responses,
        "faithful_per_response": float(n_claims) * (grounded_pct + reasonable_pct) / 100 / n_responses,
    }


__all__ = ["FAITHFUL_CODES", "claim_yield", "reported_claim_yield"]
