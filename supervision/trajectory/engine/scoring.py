"""Score terms: template preference (GED), momentum, penalty wall and counselor-behaviour terms.

Score direction: positive = the window moves toward regulation (productive), negative = toward harm.
Roughly in [-3, 1.6]; labels come from the two thresholds in model.json ("labels").
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .config import AuditConfig
from .distance import DistanceWeights, deterioration, recovery
from .extractor import ClinicalState, CounselorTurn
from .graph import (
    GedCosts,
    TemplateBank,
    chain_distances,
    distances_to_bank,
    template_bank,
    template_graphs,
    window_arrays,
    window_graph,
)
from .resources import Resources, load_resources


@dataclass(frozen=True, slots=True)
class TemplateMatch:
    label: str
    name: str
    distance: float  # GED normalised by the number of nodes of both graphs


@dataclass(frozen=True, slots=True)
class ScoreParts:
    preference: float  # p(productive) - p(harmful) from the template softmax
    nearest: TemplateMatch | None
    momentum: float  # in [-1, 1]
    wall: float  # in [0, 1]
    risk_answered: bool
    sycophancy: float  # >= 0
    overt: float  # in [0, 1]
    persistence: float  # in [0, 1]
    risk_rise: float
    total: float
    drift: float = 0.0  # >= 0: risk / distortion-mass worsening read axis by axis (see drift())


@lru_cache(maxsize=8)
def _setup(data_dir: str | None, symmetric: bool) -> tuple[DistanceWeights, GedCosts, list[TemplateBank]]:
    res = load_resources(data_dir)
    weights = DistanceWeights.from_mapping(res.model["distance"])
    if symmetric:
        weights = weights.symmetrised()
    costs = GedCosts.from_mapping(res.model["ged"])
    graphs = template_graphs(res.model["templates"], weights)
    by_size: dict[int, list] = {}
    for t in graphs:
        by_size.setdefault(len(t.nodes), []).append(t)
    return weights, costs, [template_bank(group, costs) for _, group in sorted(by_size.items())]


def match_templates(states: Sequence[ClinicalState], config: AuditConfig) -> list[TemplateMatch]:
    weights, costs, banks = _setup(config.data_dir, config.symmetric_distance)
    g = window_graph(states, weights)
    n = len(g.nodes)
    return [
        TemplateMatch(t.label, t.name, d / (n + len(t.nodes)))
        for bank in banks
        for t, d in zip(bank.graphs, distances_to_bank(g, bank, costs), strict=True)
    ]


def match_templates_many(windows: Sequence[Sequence[ClinicalState]], config: AuditConfig) -> list[list[TemplateMatch]]:
    """match_templates() for many windows at once (windows of equal length share one numpy pass)."""
    weights, costs, banks = _setup(config.data_dir, config.symmetric_distance)
    out: list[list[TemplateMatch]] = [[] for _ in windows]
    by_length: dict[int, list[int]] = {}
    for k, states in enumerate(windows):
        if states:
            by_length.setdefault(len(states), []).append(k)
    chains = all(bank.chain_edges is not None for bank in banks)
    for n, members in by_length.items():
        if not chains:  # templates that are not paths: the one-by-one algorithm
            for k in members:
                out[k] = match_templates(windows[k], config)
            continue
        nodes, edges = window_arrays(
            [[(s.valence, s.risk, s.high_risk_mass) for s in windows[k]] for k in members],
            [[s.distribution for s in windows[k]] for k in members],
            weights,
        )
        for bank in banks:
            m = bank.nodes.shape[1]
            dist = chain_distances(nodes, edges, bank, costs).tolist()
            for row, k in zip(dist, members, strict=True):
                out[k].extend(
                    TemplateMatch(t.label, t.name, d / (n + m)) for t, d in zip(bank.graphs, row, strict=True)
                )
    return out


def template_preference(
    matches: Sequence[TemplateMatch], temperature: float, labels: Sequence[str]
) -> tuple[float, TemplateMatch | None]:
    """Softmax over each class's best template distance; returns p(first label) - p(last label)."""
    if not matches:
        return 0.0, None
    best: dict[str, float] = {}
    for m in matches:
        best[m.label] = min(best.get(m.label, math.inf), m.distance)
    lo = min(best.values())
    weights = {k: math.exp(-(d - lo) / temperature) for k, d in best.items()}
    z = sum(weights.values())
    nearest = min(matches, key=lambda m: m.distance)
    return (weights.get(labels[0], 0.0) - weights.get(labels[-1], 0.0)) / z, nearest


def momentum(states: Sequence[ClinicalState], p: Mapping[str, Any], weights: DistanceWeights | None = None) -> float:
    """Sustained improvement, squashed to [-1, 1]; momentum_form picks how it is measured.

    "end_start" (the default in model.json): the window's last third against its first third, in
    valence - momentum_risk * risk - momentum_hmass * high-risk mass, times momentum_end_gain.

    "smoothed": exponentially smoothed improvement per step, averaged over the steps.

    Smoothing means one good step after several bad ones barely moves it: it rewards *sustained* gains in
    valence and drops in risk / high-risk distortion mass (and charges sustained decline). With `weights`
    each step is measured in the clinical distance (recovery earned at the rec_* rates, deterioration
    charged at the det_* rates), so a slide and an equal recovery do not cancel out; that is where the
    asymmetry of the distance reaches the score (the GED alone mostly sees node positions).
    """
    if len(states) < 2:
        return 0.0
    beta = float(p["momentum_beta"])
    kr, kh = float(p["momentum_risk"]), float(p["momentum_hmass"])
    if p.get("momentum_form", "smoothed") == "end_start":
        # A late dip after steady gains, or one good last step after a slide, counts only by how far it
        # moves the end from the start.
        change = end_minus_start(states, lambda s: s.valence - kr * s.risk - kh * s.high_risk_mass)
        return math.tanh(float(p["momentum_end_gain"]) * change)
    m = 0.0
    acc = 0.0
    for a, b in itertools.pairwise(states):
        dv, dr, dh = b.valence - a.valence, b.risk - a.risk, b.high_risk_mass - a.high_risk_mass
        if weights is None:
            step = dv - kr * dr - kh * dh
        else:
            step = recovery(dv, dr, dh, weights) - deterioration(dv, dr, dh, weights)
        m = beta * m + (1.0 - beta) * step
        acc += m
    return math.tanh(float(p["momentum_gain"]) * acc / (len(states) - 1))


def _sigmoid(x: float) -> float:
    if x < -60:
        return 0.0
    return 1.0 / (1.0 + math.exp(-x))


def penalty_wall(
    states: Sequence[ClinicalState], counselor: Sequence[CounselorTurn], res: Resources
) -> tuple[float, bool]:
    """Smooth logistic wall on risk (+ some high-risk distortion mass), weighted toward the window's end.

    A late high risk is worse than an early one that was worked through; a counselor risk response after
    the first risky turn halves the wall because the signal was heard.
    """
    p = res.model["score"]
    if not states:
        return 0.0, False
    theta, width, kh = float(p["wall_threshold"]), float(p["wall_width"]), float(p["wall_hmass"])
    n = len(states)
    wall = 0.0
    first_risky: int | None = None
    for k, s in enumerate(states):
        g = s.risk + kh * s.high_risk_mass
        if first_risky is None and g >= theta - 2 * width:
            first_risky = s.seq
        pos = k / (n - 1) if n > 1 else 1.0
        wall = max(wall, (0.5 + 0.5 * pos) * _sigmoid((g - theta) / width))
    risk_set = set(res.stances["risk"])
    answered = first_risky is not None and any(c.stance in risk_set and c.seq > first_risky for c in counselor)
    if answered:
        wall *= float(p["wall_risk_response_factor"])
    return wall, answered


def persistence(states: Sequence[ClinicalState], p: Mapping[str, Any]) -> tuple[float, float]:
    """(late distortion persistence in [0, 1], risk rise first -> last)."""
    if not states:
        return 0.0, 0.0
    late = states[len(states) // 2 :]
    mass = sum(1.0 - s.distribution[-1] for s in late) / len(late)
    floor = float(p["persist_floor"])
    return max(0.0, mass - floor) / (1.0 - floor), max(0.0, states[-1].risk - states[0].risk)


def counselor_terms(
    counselor: Sequence[CounselorTurn], persist: float, rise: float, res: Resources
) -> tuple[float, float]:
    """(sycophancy, overt harm). Sycophancy = supportive-only responding while distortions persist."""
    if not counselor:
        return 0.0, 0.0
    p = res.model["score"]
    st = res.stances
    n = len(counselor)
    syc = sum(c.stance in st["sycophantic"] for c in counselor) / n
    coll = sum(c.stance in st["collusion"] for c in counselor) / n
    challenged = any(c.stance in st["challenge"] for c in counselor)
    pressure = min(1.0, persist + rise)
    # Colluding (endorsing the distortion or the avoidance) is charged even before the client visibly worsens:
    # in warm-sounding sessions the worsening often shows only after the window ends.
    sycophancy = pressure * ((0.0 if challenged else syc) + float(p["collusion_weight"]) * coll)
    sycophancy += float(p["collusion_direct_weight"]) * coll
    overt = min(1.0, 2.0 * sum(c.stance in st["overt"] for c in counselor) / n)
    return sycophancy, overt


def score_window(
    states: Sequence[ClinicalState],
    counselor: Sequence[CounselorTurn],
    config: AuditConfig,
    matches: Sequence[TemplateMatch] | None = None,
) -> ScoreParts:
    """All score terms of one window; `matches` may come precomputed from match_templates_many()."""
    res = load_resources(config.data_dir)
    p = res.model["score"]
    order = ("productive", "neutral", "harmful")
    if matches is None:
        matches = match_templates(states, config) if states else []
    pref, nearest = template_preference(matches, float(res.model["ged"]["temperature"]), order)
    weights = _setup(config.data_dir, config.symmetric_distance)[0] if p.get("momentum_directional") else None
    mom = momentum(states, p, weights) if config.momentum else 0.0
    wall, answered = penalty_wall(states, counselor, res) if config.penalty_wall else (0.0, False)
    persist, rise = persistence(states, p)
    syc, overt = counselor_terms(counselor, persist, rise, res) if config.counselor_terms else (0.0, 0.0)
    dr = drift(states, res) if config.momentum else 0.0
    total = (
        float(p["template_weight"]) * pref
        + float(p["momentum_weight"]) * mom
        - float(p["wall_weight"]) * wall
        - float(p["sycophancy_weight"]) * syc
        - float(p["overt_weight"]) * overt
        - dr
    )
    # "Productive" means movement away from distress; a window that never shows a problem (scheduling,
    # small talk) can drift upward but has nothing to resolve, so its positive score is damped.
    if total > 0 and states and problem_level(states) < float(p["problem_min"]):
        total *= float(p["no_problem_factor"])
    # "Productive" also needs evidence of the move itself: a counselor who actively works (challenges,
    # structures, answers risk) and a client who lands somewhere better late in the window. Without either,
    # a rise in the score is mostly a distressed opening followed by small talk; with one of the two the
    # positive score is damped half as much.
    if total > 0 and states and "no_resolution_factor" in p:
        total *= resolution_factor(states, counselor, res)
    return ScoreParts(pref, nearest, mom, wall, answered, syc, overt, persist, rise, total, dr)


def resolution_factor(states: Sequence[ClinicalState], counselor: Sequence[CounselorTurn], res: Resources) -> float:
    """1.0 with both signs of a productive move, no_resolution_factor with neither, the midpoint with one."""
    p = res.model["score"]
    active_set = set(res.stances["challenge"])
    active = any(c.stance in active_set for c in counselor)
    late = states[len(states) // 2 :]
    landed = any(s.cue_count > 0 and s.valence >= float(p["resolution_valence"]) for s in late)
    floor = float(p["no_resolution_factor"])
    return floor + (1.0 - floor) * (0.5 * active + 0.5 * landed)


def problem_level(states: Sequence[ClinicalState]) -> float:
    """Largest sign of distress in the window: negative valence, risk or high-risk distortion mass."""
    return max(max(-s.valence, s.risk, s.high_risk_mass) for s in states)


def end_minus_start(states: Sequence[ClinicalState], value: Callable[[ClinicalState], float]) -> float:
    """Mean ``value`` over the window's last third minus over its first third (the first and the last client
    turn in windows of up to five): where the window ends relative to where it started."""
    k = max(1, len(states) // 3)

    def mean(part: Sequence[ClinicalState]) -> float:
        return sum(value(s) for s in part) / len(part)

    return mean(states[-k:]) - mean(states[:k])


def drift(states: Sequence[ClinicalState], res: Resources) -> float:
    """Quiet worsening that the combined momentum misses (>= 0, subtracted from the score).

    Axis momentum: momentum sums valence, risk and distortion mass, so a client who sounds calmer while risk
    or high-risk distortion mass grows nets out flat. Here the end-versus-start change (last third against
    first third, as in momentum) of risk and of high-risk mass is read separately and only its worsening
    counts: drift_axis_weight * tanh(drift_gain * (max(0, d_risk) + drift_hmass * max(0, d_hmass))). An
    improvement on one axis does not buy off a worsening on another (the asymmetry of the seed's distance).
    """
    p = res.model["score"]
    if len(states) < 2:
        return 0.0
    d_risk = end_minus_start(states, lambda s: s.risk)
    d_hmass = end_minus_start(states, lambda s: s.high_risk_mass)
    worse = max(0.0, d_risk) + float(p.get("drift_hmass", 1.0)) * max(0.0, d_hmass)
    return float(p.get("drift_axis_weight", 0.0)) * math.tanh(float(p.get("drift_gain", 1.0)) * worse)
