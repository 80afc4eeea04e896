"""Clinical distance between consecutive states.

The asymmetric distance is a quasi-metric: moving toward despair (valence down, risk up, high-risk
distortion mass up) is charged at the `det_*` rates, moving toward regulation at the smaller `rec_*` rates.
That is the DESG point: a warm-sounding step that worsens the client must not be cancelled out by an equal
step back. The symmetric variant exists for the ablation only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class DistanceWeights:
    det_valence: float
    rec_valence: float
    det_risk: float
    rec_risk: float
    det_hmass: float
    rec_hmass: float
    kl_epsilon: float

    @classmethod
    def from_mapping(cls, m: Mapping[str, float]) -> DistanceWeights:
        return cls(*(float(m[f]) for f in cls.__slots__))

    def symmetrised(self) -> DistanceWeights:
        """Same total weight per axis, but no direction: the ablation baseline."""
        v = (self.det_valence + self.rec_valence) / 2
        r = (self.det_risk + self.rec_risk) / 2
        h = (self.det_hmass + self.rec_hmass) / 2
        return DistanceWeights(v, v, r, r, h, h, self.kl_epsilon)


def deterioration(dv: float, dr: float, dh: float, w: DistanceWeights) -> float:
    """Cost of the worsening part of a step (dv = valence change, dr = risk change, dh = hmass change)."""
    return w.det_valence * max(0.0, -dv) + w.det_risk * max(0.0, dr) + w.det_hmass * max(0.0, dh)


def recovery(dv: float, dr: float, dh: float, w: DistanceWeights) -> float:
    """Cost of the improving part of a step (smaller rates than deterioration in the asymmetric case)."""
    return w.rec_valence * max(0.0, dv) + w.rec_risk * max(0.0, -dr) + w.rec_hmass * max(0.0, -dh)


def clinical_distance(a: tuple[float, float, float], b: tuple[float, float, float], w: DistanceWeights) -> float:
    """Distance from state a to state b, each given as (valence, risk, high_risk_mass)."""
    dv, dr, dh = b[0] - a[0], b[1] - a[1], b[2] - a[2]
    return deterioration(dv, dr, dh, w) + recovery(dv, dr, dh, w)


def symmetric_kl(p: Sequence[float], q: Sequence[float], eps: float) -> float:
    """Jeffreys divergence after additive smoothing, so zero-mass classes do not make it infinite."""
    n = len(p)
    zp = 1.0 + eps * n
    zq = 1.0 + eps * n
    total = 0.0
    for pi, qi in zip(p, q, strict=True):
        ps = (pi + eps) / zp
        qs = (qi + eps) / zq
        total += (ps - qs) * math.log(ps / qs)
    return total
