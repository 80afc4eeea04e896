"""Trajectory graphs and bipartite graph edit distance (Riesen & Bunke 2009) with Hungarian assignment.

Nodes are client states with features (valence, risk, high-risk mass, relative position); the position
feature keeps the matching temporal, so an early distressed state is not matched to a template's end.
Edges are directed transitions with attributes (clinical distance, symmetric-smoothed KL divergence).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from .distance import DistanceWeights, clinical_distance, symmetric_kl
from .extractor import ClinicalState

# Larger than any real cost, finite so linear_sum_assignment stays well defined.
_FORBIDDEN = 1e9


@dataclass(frozen=True, slots=True)
class TrajectoryGraph:
    nodes: np.ndarray  # (n, 4): valence, risk, high_risk_mass, position
    edges: Mapping[tuple[int, int], np.ndarray]  # (src, dst) -> (clinical, kl)
    name: str = ""
    label: str = ""


@dataclass(frozen=True, slots=True)
class GedCosts:
    node_weights: np.ndarray  # (4,)
    node_indel: float
    edge_weights: np.ndarray  # (2,)
    edge_indel: float

    @classmethod
    def from_mapping(cls, m: Mapping[str, Any]) -> GedCosts:
        nw = m["node_weights"]
        ew = m["edge_weights"]
        return cls(
            np.array([nw["valence"], nw["risk"], nw["hmass"], nw["position"]], dtype=float),
            float(m["node_indel"]),
            np.array([ew["clinical"], ew["kl"]], dtype=float),
            float(m["edge_indel"]),
        )


def _positions(n: int) -> np.ndarray:
    return np.linspace(0.0, 1.0, n) if n > 1 else np.ones(1)


def chain_graph(
    points: Sequence[tuple[float, float, float]],
    kls: Sequence[float],
    weights: DistanceWeights,
    *,
    name: str = "",
    label: str = "",
) -> TrajectoryGraph:
    """A path graph over (valence, risk, hmass) points; kls[i] is the KL of edge i -> i+1."""
    n = len(points)
    nodes = np.column_stack([np.asarray(points, dtype=float).reshape(n, 3), _positions(n)]) if n else np.zeros(
        (0, 4)
    )
    edges = {
        (i, i + 1): np.array([clinical_distance(points[i], points[i + 1], weights), kls[i]])
        for i in range(n - 1)
    }
    return TrajectoryGraph(nodes, edges, name, label)


def window_graph(states: Sequence[ClinicalState], weights: DistanceWeights) -> TrajectoryGraph:
    points = [(s.valence, s.risk, s.high_risk_mass) for s in states]
    kls = [
        symmetric_kl(states[i].distribution, states[i + 1].distribution, weights.kl_epsilon)
        for i in range(len(states) - 1)
    ]
    return chain_graph(points, kls, weights)


def template_graphs(specs: Sequence[Mapping[str, Any]], weights: DistanceWeights) -> list[TrajectoryGraph]:
    graphs = []
    for spec in specs:
        pts = list(zip(spec["valence"], spec["risk"], spec["hmass"], strict=True))
        kls = [float(spec.get("edge_kl", 0.0))] * max(0, len(pts) - 1)
        graphs.append(chain_graph(pts, kls, weights, name=spec["name"], label=spec["label"]))
    return graphs


def _incident(g: TrajectoryGraph, outgoing: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per node: mean attribute of its outgoing (or incoming) edges and whether it has any."""
    n = len(g.nodes)
    acc = np.zeros((n, 2))
    cnt = np.zeros(n)
    for (src, dst), attr in g.edges.items():
        k = src if outgoing else dst
        acc[k] += attr
        cnt[k] += 1
    has = cnt > 0
    acc[has] /= cnt[has, None]
    return acc, has


def _local_edge_cost(g1: TrajectoryGraph, g2: TrajectoryGraph, c: GedCosts) -> np.ndarray:
    """Estimated edge cost of substituting node i by node j (half of each incident edge's cost)."""
    total = np.zeros((len(g1.nodes), len(g2.nodes)))
    for outgoing in (True, False):
        a1, h1 = _incident(g1, outgoing)
        a2, h2 = _incident(g2, outgoing)
        sub = np.abs(a1[:, None, :] - a2[None, :, :]) @ c.edge_weights
        both = h1[:, None] & h2[None, :]
        one = h1[:, None] ^ h2[None, :]
        total += np.where(both, sub, 0.0) + np.where(one, c.edge_indel, 0.0)
    return 0.5 * total


def _assignment_matrix(g1: TrajectoryGraph, g2: TrajectoryGraph, c: GedCosts) -> np.ndarray:
    n, m = len(g1.nodes), len(g2.nodes)
    big = np.zeros((n + m, n + m))
    if n and m:
        sub = np.abs(g1.nodes[:, None, :] - g2.nodes[None, :, :]) @ c.node_weights
        big[:n, :m] = sub + _local_edge_cost(g1, g2, c)
    deg1 = np.zeros(n)
    deg2 = np.zeros(m)
    for s, d in g1.edges:
        deg1[s] += 0.5
        deg1[d] += 0.5
    for s, d in g2.edges:
        deg2[s] += 0.5
        deg2[d] += 0.5
    dele = np.full((n, n), _FORBIDDEN)
    np.fill_diagonal(dele, c.node_indel + deg1 * c.edge_indel)
    ins = np.full((m, m), _FORBIDDEN)
    np.fill_diagonal(ins, c.node_indel + deg2 * c.edge_indel)
    big[:n, m:] = dele
    big[n:, :m] = ins
    return big


def node_mapping(g1: TrajectoryGraph, g2: TrajectoryGraph, c: GedCosts) -> list[int | None]:
    """Hungarian assignment of g1's nodes to g2's nodes (None = deleted)."""
    n, m = len(g1.nodes), len(g2.nodes)
    if n == 0:
        return []
    rows, cols = linear_sum_assignment(_assignment_matrix(g1, g2, c))
    mapping: list[int | None] = [None] * n
    for r, col in zip(rows.tolist(), cols.tolist(), strict=True):
        if r < n and col < m:
            mapping[r] = col
    return mapping


def edit_cost(g1: TrajectoryGraph, g2: TrajectoryGraph, mapping: Sequence[int | None], c: GedCosts) -> float:
    """Exact cost of the edit path induced by a node mapping (an upper bound on the true GED)."""
    m = len(g2.nodes)
    cost = 0.0
    used = [False] * m
    for i, j in enumerate(mapping):
        if j is None:
            cost += c.node_indel
        else:
            used[j] = True
            cost += float(np.abs(g1.nodes[i] - g2.nodes[j]) @ c.node_weights)
    cost += c.node_indel * used.count(False)
    matched_edges = set()
    for (s, d), attr in g1.edges.items():
        ms, md = mapping[s], mapping[d]
        target = (ms, md) if ms is not None and md is not None else None
        if target is not None and target in g2.edges:
            matched_edges.add(target)
            cost += float(np.abs(attr - g2.edges[target]) @ c.edge_weights)
        else:
            cost += c.edge_indel
    cost += c.edge_indel * (len(g2.edges) - len(matched_edges))
    return cost


def graph_edit_distance(g1: TrajectoryGraph, g2: TrajectoryGraph, costs: GedCosts) -> float:
    """Approximate GED: Hungarian node assignment, then the exact cost of the induced edit path."""
    return edit_cost(g1, g2, node_mapping(g1, g2, costs), costs)
