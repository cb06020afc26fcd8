"""The learned cost model: gradient-boosted trees (LightGBM) over candidates' loop-IR features.

It predicts a candidate's time relative to its kernel's default schedule (``log(t / t_default)``, both
measured in the same batch), so one model pools every kernel's measurements: relative times are comparable
across kernels of very different sizes, absolute ones are not.  Retrained (from scratch: a few hundred to a
few thousand rows train in well under a second) as measurements arrive; until it has ``MIN_ROWS`` rows it
predicts nothing and the search draws candidates at random.  The search measures the candidates it ranks
best (Ansor's loop: sample, rank by the model, measure the top, learn).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np

from rewrite.ir.errors import UsageError

MIN_ROWS = 24  # fewer measurements than this: no model yet
PARAMS = {
    "objective": "regression",
    "learning_rate": 0.1,
    "num_leaves": 15,
    "min_data_in_leaf": 4,
    "feature_fraction": 0.9,
    "verbose": -1,
    "num_threads": 1,
    "deterministic": True,
    "seed": 0,
}
ROUNDS = 80


def _lightgbm():
    try:
        import lightgbm
    except ImportError:
        raise UsageError(
            "eqsat tune needs LightGBM for its cost model", hint="pip install 'eqsat[tune]' (lightgbm, ray)"
        ) from None
    return lightgbm


class CostModel:
    """``add`` measurements, ``fit``, ``predict`` log relative times (lower is faster)."""

    def __init__(self) -> None:
        self.x: list[list[float]] = []
        self.y: list[float] = []
        self._booster = None
        self._fitted_rows = 0

    def add(self, feats: Sequence[float], ratio: float) -> None:
        if feats and ratio > 0 and math.isfinite(ratio):
            self.x.append(list(feats))
            self.y.append(math.log(ratio))

    @property
    def ready(self) -> bool:
        return self._booster is not None

    def fit(self) -> None:
        """Train on every row so far (nothing below ``MIN_ROWS``, nothing new since the last fit)."""
        if len(self.y) < MIN_ROWS or len(self.y) == self._fitted_rows:
            return
        lgb = _lightgbm()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            data = lgb.Dataset(np.asarray(self.x, dtype=np.float64), np.asarray(self.y), free_raw_data=True)
            self._booster = lgb.train(PARAMS, data, num_boost_round=ROUNDS)
        self._fitted_rows = len(self.y)

    def predict(self, feats: Sequence[Sequence[float]]) -> list[float]:
        """Predicted ``log(t / t_default)`` per row; zeros before the model is trained."""
        if self._booster is None or not feats:
            return [0.0] * len(feats)
        return [float(v) for v in self._booster.predict(np.asarray(feats, dtype=np.float64))]


__all__ = ["MIN_ROWS", "CostModel"]
