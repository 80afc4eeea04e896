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
    """Use build_graph(): the incident-edge summaries are precomputed once per graph, not per comparison."""

    nodes: np.ndarray  # (n, 4): valence, risk, high_risk_mass, position
    edges: Mapping[tuple[int, int], np.ndarray]  # (src, dst) -> (clinical, kl)
    name: str
    label: str
    out_attr: np.ndarray  # (n, 2) mean attribute of outgoing edges
    has_out: np.ndarray  # (n,) bool
    in_attr: np.ndarray
    has_in: np.ndarray
    half_degree: np.ndarray  # (n,) half the number of incident edges (each edge is shared by two nodes)


def _incident(n: int, edges: Mapping[tuple[int, int], np.ndarray], outgoing: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per node: mean attribute of its outgoing (or incoming) edges and whether it has any."""
    acc = np.zeros((n, 2))
    cnt = np.zeros(n)
    for (src, dst), attr in edges.items():
        k = src if outgoing else dst
        acc[k] += attr
        cnt[k] += 1
    has = cnt > 0
    acc[has] /= cnt[has, None]
    return acc, has


def build_graph(
    nodes: np.ndarray, edges: Mapping[tuple[int, int], np.ndarray], name: str = "", label: str = ""
) -> TrajectoryGraph:
    n = len(nodes)
    out_attr, has_out = _incident(n, edges, True)
    in_attr, has_in = _incident(n, edges, False)
    half = np.zeros(n)
    for s, d in edges:
        half[s] += 0.5
        half[d] += 0.5
    return TrajectoryGraph(nodes, edges, name, label, out_attr, has_out, in_attr, has_in, half)


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
    nodes = np.column_stack([np.asarray(points, dtype=float).reshape(n, 3), _positions(n)]) if n else np.zeros((0, 4))
    edges = {(i, i + 1): np.array([clinical_distance(points[i], points[i + 1], weights), kls[i]]) for i in range(n - 1)}
    return build_graph(nodes, edges, name, label)


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


def _local_edge_cost(g1: TrajectoryGraph, g2: TrajectoryGraph, c: GedCosts) -> np.ndarray:
    """Estimated edge cost of substituting node i by node j (half of each incident edge's cost)."""
    total = np.zeros((len(g1.nodes), len(g2.nodes)))
    for a1, h1, a2, h2 in (
        (g1.out_attr, g1.has_out, g2.out_attr, g2.has_out),
        (g1.in_attr, g1.has_in, g2.in_attr, g2.has_in),
    ):
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
    # Deletion/insertion blocks: diagonal costs, everything else forbidden (bottom-right stays 0).
    big[:n, m:] = _FORBIDDEN
    big[n:, :m] = _FORBIDDEN
    idx_n = np.arange(n)
    idx_m = np.arange(m)
    big[idx_n, m + idx_n] = c.node_indel + g1.half_degree * c.edge_indel
    big[n + idx_m, idx_m] = c.node_indel + g2.half_degree * c.edge_indel
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


@dataclass(frozen=True, slots=True)
class TemplateBank:
    """Same-size templates stacked so one window is compared to all of them with a few numpy calls."""

    graphs: tuple[TrajectoryGraph, ...]
    nodes: np.ndarray  # (T, m, 4)
    out_attr: np.ndarray  # (T, m, 2)
    has_out: np.ndarray  # (T, m)
    in_attr: np.ndarray
    has_in: np.ndarray
    insert_cost: np.ndarray  # (T, m)


def template_bank(graphs: Sequence[TrajectoryGraph], c: GedCosts) -> TemplateBank:
    sizes = {len(g.nodes) for g in graphs}
    if len(sizes) != 1:
        raise ValueError("templates in one bank must have the same number of nodes")
    return TemplateBank(
        tuple(graphs),
        np.stack([g.nodes for g in graphs]),
        np.stack([g.out_attr for g in graphs]),
        np.stack([g.has_out for g in graphs]),
        np.stack([g.in_attr for g in graphs]),
        np.stack([g.has_in for g in graphs]),
        np.stack([c.node_indel + g.half_degree * c.edge_indel for g in graphs]),
    )


def distances_to_bank(g: TrajectoryGraph, bank: TemplateBank, c: GedCosts) -> list[float]:
    """graph_edit_distance(g, t) for every template t in the bank (same algorithm, batched set-up)."""
    n, m = len(g.nodes), bank.nodes.shape[1]
    count = len(bank.graphs)
    big = np.zeros((count, n + m, n + m))
    if n:
        node_sub = np.abs(g.nodes[None, :, None, :] - bank.nodes[:, None, :, :]) @ c.node_weights
        local = np.zeros_like(node_sub)
        for a1, h1, a2, h2 in (
            (g.out_attr, g.has_out, bank.out_attr, bank.has_out),
            (g.in_attr, g.has_in, bank.in_attr, bank.has_in),
        ):
            sub = np.abs(a1[None, :, None, :] - a2[:, None, :, :]) @ c.edge_weights
            both = h1[None, :, None] & h2[:, None, :]
            one = h1[None, :, None] ^ h2[:, None, :]
            local += np.where(both, sub, 0.0) + np.where(one, c.edge_indel, 0.0)
        big[:, :n, :m] = node_sub + 0.5 * local
        big[:, :n, m:] = _FORBIDDEN
        idx_n = np.arange(n)
        big[:, idx_n, m + idx_n] = c.node_indel + g.half_degree * c.edge_indel
    big[:, n:, :m] = _FORBIDDEN
    idx_m = np.arange(m)
    big[:, n + idx_m, idx_m] = bank.insert_cost
    out = []
    for k, t in enumerate(bank.graphs):
        mapping: list[int | None] = [None] * n
        if n:
            rows, cols = linear_sum_assignment(big[k])
            for r, col in zip(rows.tolist(), cols.tolist(), strict=True):
                if r < n and col < m:
                    mapping[r] = col
        out.append(edit_cost(g, t, mapping, c))
    return out
