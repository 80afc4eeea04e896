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
    chain_edges: np.ndarray | None = None  # (n-1, 2) attributes of i -> i+1 when the graph is exactly a path


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
    chain = None
    if set(edges) == {(i, i + 1) for i in range(n - 1)}:
        chain = np.array([edges[(i, i + 1)] for i in range(n - 1)], dtype=float).reshape(max(0, n - 1), 2)
    return TrajectoryGraph(nodes, edges, name, label, out_attr, has_out, in_attr, has_in, half, chain)


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
    if n == 0:
        return build_graph(np.zeros((0, 4)), {}, name, label)
    nodes = np.column_stack([np.asarray(points, dtype=float).reshape(n, 3), _positions(n)])
    attrs = np.array(
        [(clinical_distance(points[i], points[i + 1], weights), kls[i]) for i in range(n - 1)], dtype=float
    ).reshape(n - 1, 2)
    edges = {(i, i + 1): attrs[i] for i in range(n - 1)}
    # What build_graph() would compute, without its per-edge Python loop (this runs once per window).
    out_attr = np.zeros((n, 2))
    out_attr[:-1] = attrs
    in_attr = np.zeros((n, 2))
    in_attr[1:] = attrs
    idx = np.arange(n)
    has_out, has_in = idx < n - 1, idx > 0
    half = 0.5 * (has_out.astype(float) + has_in)
    return TrajectoryGraph(nodes, edges, name, label, out_attr, has_out, in_attr, has_in, half, attrs)


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
    chain_edges: np.ndarray | None = None  # (T, m-1, 2) when every template is a path
    io_attr: np.ndarray | None = None  # (T, 2, m, 2): out_attr and in_attr stacked
    io_has: np.ndarray | None = None  # (T, 2, m)


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
        np.stack([g.chain_edges for g in graphs]) if all(g.chain_edges is not None for g in graphs) else None,
        np.stack([np.stack((g.out_attr, g.in_attr)) for g in graphs]),
        np.stack([np.stack((g.has_out, g.has_in)) for g in graphs]),
    )


def distances_to_bank(g: TrajectoryGraph, bank: TemplateBank, c: GedCosts) -> list[float]:
    """graph_edit_distance(g, t) for every template t in the bank (same algorithm, batched set-up)."""
    n, m = len(g.nodes), bank.nodes.shape[1]
    count = len(bank.graphs)
    big = _static_blocks(bank, n, m, c).copy()
    if n:
        node_sub = np.abs(g.nodes[None, :, None, :] - bank.nodes[:, None, :, :]) @ c.node_weights
        # Outgoing and incoming edge summaries in one broadcast: axis 1 is (out, in).
        g_attr = np.stack((g.out_attr, g.in_attr))  # (2, n, 2)
        g_has = np.stack((g.has_out, g.has_in))  # (2, n)
        sub = np.abs(g_attr[None, :, :, None, :] - bank.io_attr[:, :, None, :, :]) @ c.edge_weights  # (T, 2, n, m)
        both = g_has[None, :, :, None] & bank.io_has[:, :, None, :]
        one = g_has[None, :, :, None] ^ bank.io_has[:, :, None, :]
        local = np.where(both, sub, np.where(one, c.edge_indel, 0.0)).sum(axis=1)
        big[:, :n, :m] = node_sub + 0.5 * local
        idx_n = np.arange(n)
        big[:, idx_n, m + idx_n] = c.node_indel + g.half_degree * c.edge_indel
    # linear_sum_assignment returns rows in order, so the first n columns are the window nodes' images;
    # an image >= m is a deletion.
    cols = np.empty((count, n), dtype=np.intp)
    for k in range(count):
        cols[k] = linear_sum_assignment(big[k])[1][:n]
    mappings = np.where(cols < m, cols, -1)
    if g.chain_edges is not None and bank.chain_edges is not None:
        return _chain_edit_costs(g, bank, mappings, c).tolist()
    return [edit_cost(g, t, [int(j) if j >= 0 else None for j in mappings[k]], c) for k, t in enumerate(bank.graphs)]


_STATIC: dict[tuple[int, int, int], np.ndarray] = {}


def _static_blocks(bank: TemplateBank, n: int, m: int, c: GedCosts) -> np.ndarray:
    """The parts of the (n+m)^2 assignment matrices that do not depend on the window: forbidden blocks,
    template insertions and the free dummy-dummy block. Cached per bank and window size."""
    key = (id(bank), n, m)
    cached = _STATIC.get(key)
    if cached is None:
        cached = np.zeros((len(bank.graphs), n + m, n + m))
        cached[:, :n, m:] = _FORBIDDEN
        cached[:, n:, :m] = _FORBIDDEN
        idx_m = np.arange(m)
        cached[:, n + idx_m, idx_m] = bank.insert_cost
        if len(_STATIC) > 256:
            _STATIC.clear()
        _STATIC[key] = cached
    return cached


def _chain_edit_costs(g: TrajectoryGraph, bank: TemplateBank, mappings: np.ndarray, c: GedCosts) -> np.ndarray:
    """edit_cost for path graphs, all templates at once: an edge i -> i+1 is kept exactly when its ends map
    to consecutive template nodes j -> j+1 (the mapping is injective, so no template edge is kept twice)."""
    count, n = mappings.shape
    m = bank.nodes.shape[1]
    assigned = mappings >= 0
    safe = np.where(assigned, mappings, 0)
    tnodes = bank.nodes[np.arange(count)[:, None], safe]  # (T, n, 4)
    node_sub = np.abs(g.nodes[None, :, :] - tnodes) @ c.node_weights
    cost = np.where(assigned, node_sub, c.node_indel).sum(axis=1)
    cost += c.node_indel * (m - assigned.sum(axis=1))
    if n > 1:
        src, dst = mappings[:, :-1], mappings[:, 1:]
        kept = (src >= 0) & (dst == src + 1)
        tedges = bank.chain_edges[np.arange(count)[:, None], np.where(kept, src, 0)]  # (T, n-1, 2)
        edge_sub = np.abs(g.chain_edges[None, :, :] - tedges) @ c.edge_weights
        cost += np.where(kept, edge_sub, c.edge_indel).sum(axis=1)
        n_kept = kept.sum(axis=1)
    else:
        n_kept = np.zeros(count, dtype=np.intp)
    cost += c.edge_indel * (max(0, m - 1) - n_kept)
    return cost


def window_arrays(
    groups: Sequence[Sequence[tuple[float, float, float]]],
    dists: Sequence[Sequence[Sequence[float]]],
    weights: DistanceWeights,
) -> tuple[np.ndarray, np.ndarray]:
    """Nodes (B, n, 4) and chain edge attributes (B, n-1, 2) of B same-length windows, as window_graph()
    builds them one by one: the clinical distance and smoothed KL of every step, computed array-wise."""
    pts = np.asarray(groups, dtype=float)  # (B, n, 3)
    b, n = pts.shape[:2]
    nodes = np.concatenate([pts, np.broadcast_to(_positions(n), (b, n))[:, :, None]], axis=2)
    d = pts[:, 1:] - pts[:, :-1]
    dv, dr, dh = d[..., 0], d[..., 1], d[..., 2]
    w = weights
    det = w.det_valence * np.maximum(0.0, -dv) + w.det_risk * np.maximum(0.0, dr) + w.det_hmass * np.maximum(0.0, dh)
    rec = w.rec_valence * np.maximum(0.0, dv) + w.rec_risk * np.maximum(0.0, -dr) + w.rec_hmass * np.maximum(0.0, -dh)
    p = np.asarray(dists, dtype=float)  # (B, n, K)
    eps = w.kl_epsilon
    s = (p + eps) / (1.0 + eps * p.shape[2])
    kl = ((s[:, :-1] - s[:, 1:]) * np.log(s[:, :-1] / s[:, 1:])).sum(axis=2)
    return nodes, np.stack([det + rec, kl], axis=2)


def chain_distances(nodes: np.ndarray, edges: np.ndarray, bank: TemplateBank, c: GedCosts) -> np.ndarray:
    """(B, T) approximate GEDs between B path-graph windows of n nodes and the bank's path templates.

    The same algorithm as distances_to_bank() (Hungarian assignment on the Riesen-Bunke cost matrix, then the
    exact cost of the induced edit path), with the cost matrices of all windows built in one numpy pass;
    only the assignments themselves run one by one.
    """
    b, n = nodes.shape[:2]
    count, m = bank.nodes.shape[:2]
    idx = np.arange(n)
    has_out, has_in = idx < n - 1, idx > 0
    g_attr = np.zeros((b, 2, n, 2))
    g_attr[:, 0, :-1] = edges
    g_attr[:, 1, 1:] = edges
    g_has = np.stack((has_out, has_in))  # (2, n)
    node_sub = np.abs(nodes[:, None, :, None, :] - bank.nodes[None, :, None, :, :]) @ c.node_weights  # (B,T,n,m)
    sub = np.abs(g_attr[:, None, :, :, None, :] - bank.io_attr[None, :, :, None, :, :]) @ c.edge_weights
    both = g_has[None, None, :, :, None] & bank.io_has[None, :, :, None, :]
    one = g_has[None, None, :, :, None] ^ bank.io_has[None, :, :, None, :]
    local = np.where(both, sub, np.where(one, c.edge_indel, 0.0)).sum(axis=2)
    big = np.broadcast_to(_static_blocks(bank, n, m, c), (b, count, n + m, n + m)).copy()
    big[:, :, :n, :m] = node_sub + 0.5 * local
    half = 0.5 * (has_out.astype(float) + has_in)
    big[:, :, idx, m + idx] = c.node_indel + half * c.edge_indel
    cols = np.empty((b, count, n), dtype=np.intp)
    flat_big = big.reshape(b * count, n + m, n + m)
    flat_cols = cols.reshape(b * count, n)
    for k in range(b * count):
        flat_cols[k] = linear_sum_assignment(flat_big[k])[1][:n]
    mapping = np.where(cols < m, cols, -1)
    assigned = mapping >= 0
    safe = np.where(assigned, mapping, 0)
    chosen = np.take_along_axis(node_sub, safe[..., None], axis=3)[..., 0]
    cost = np.where(assigned, chosen, c.node_indel).sum(axis=2) + c.node_indel * (m - assigned.sum(axis=2))
    n_kept = np.zeros((b, count))
    if n > 1:
        src, dst = mapping[..., :-1], mapping[..., 1:]
        kept = (src >= 0) & (dst == src + 1)
        tedges = bank.chain_edges[np.arange(count)[None, :, None], np.where(kept, src, 0)]  # (B,T,n-1,2)
        edge_sub = np.abs(edges[:, None, :, :] - tedges) @ c.edge_weights
        cost += np.where(kept, edge_sub, c.edge_indel).sum(axis=2)
        n_kept = kept.sum(axis=2)
    return cost + c.edge_indel * (max(0, m - 1) - n_kept)
