"""Window audit: states -> graph/score terms -> label, score and a Korean explanation."""

from __future__ import annotations

import gc
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import numpy as np

from .config import DEFAULT_CONFIG, AuditConfig
from .extractor import (
    ClinicalState,
    CounselorTurn,
    carry_forward,
    classify_counselor,
    client_state,
    counselor_stance,
    extract_state,
)
from .layer import LayerInputs, load_layer, window_features
from .resources import Resources, load_resources
from .scoring import ScoreParts, match_templates_many, score_window
from .window_text import WindowTexts

PRODUCTIVE, NEUTRAL, HARMFUL = "productive", "neutral", "harmful"

# One turn as a tuple, the order of the §2 fields (callers that read turns from a database need no dicts):
# (seq, utterance_id, speaker, text, nonverbal, techniques, client_states)
TurnFields = tuple[int, str, str, str, Sequence[str], Sequence[str], Sequence[str]]
# What the engine reads of one window: its client states, its counselor turns, the client turns' client-state
# codes (empty when the audit reads no labels) and its words per speaker (the verdict layer's), in window order.
Prepared = tuple[list[ClinicalState], list[CounselorTurn], list[tuple[str, ...]], WindowTexts]
# The verdict: label, score and, when the verdict layer decided, its probability of each label.
Verdict = tuple[str, float, Mapping[str, float] | None]


@dataclass(frozen=True, slots=True)
class WindowAudit:
    """Result for one window.

    score: positive = toward regulation (productive), negative = toward harm: with the verdict layer
    (data/layer.json, the default) p(productive) - p(harmful) in [-1, 1], the label the likeliest verdict;
    without it the engine's score, cut by the thresholds in data/model.json ("labels").
    states: one dict per client turn (seq, utterance_id, valence, arousal, risk, high_risk_mass,
    top_distortion, distortions). sycophancy_turns: counselor utterance_ids flagged as
    supportive-only responses in a harmful window (stealth sycophancy); empty otherwise.
    """

    label: str
    score: float
    explanation: str
    states: list[dict[str, Any]]
    sycophancy_turns: list[str]
    nearest_template: str = ""
    components: dict[str, float] = field(default_factory=dict)
    # The states the score was computed from, unrounded (``states`` holds them rounded, as dicts); lets a
    # caller that stores JSON encode each distinct state once (see services.audit_rows).
    clinical_states: tuple[ClinicalState, ...] = ()


def _label(score: float, thresholds: Mapping[str, float]) -> str:
    if score >= float(thresholds["productive_min"]):
        return PRODUCTIVE
    if score <= float(thresholds["harmful_max"]):
        return HARMFUL
    return NEUTRAL


def _persisting_distortions(states: Sequence[ClinicalState], res: Resources) -> list[str]:
    """Distortion classes whose mean mass over the second half of the window stays above the floor."""
    if not states:
        return []
    late = states[len(states) // 2 :]
    floor = float(res.model["score"]["persist_distortion_min"])
    if floor > 0.0 and not any(any(s.distribution[:-1]) for s in late):
        return []  # no distortion mass late in the window (the common case): every mean is 0
    columns = zip(*(s.distribution for s in late), strict=True)  # one tuple per class, none last
    means = [(sum(col) / len(late), cls) for col, cls in zip(columns, res.classes[:-1], strict=False)]
    return [c for m, c in sorted(means, key=lambda x: (-x[0], x[1])) if m >= floor][:3]


def _named(codes: Sequence[str], res: Resources) -> str:
    return res.texts["joiner"].join(f"{res.names_ko.get(c, c)}({c})" for c in codes)


def _stealth_turns(
    label: str, parts: ScoreParts, counselor: Sequence[CounselorTurn], persisting: Sequence[str], res: Resources
) -> list[str]:
    st = res.stances
    if label != HARMFUL or not counselor:
        return []
    if any(c.stance in st["challenge"] or c.stance in st["overt"] for c in counselor):
        return []
    if not persisting and parts.risk_rise < float(res.model["score"]["risk_rise_min"]):
        return []
    return [c.utterance_id for c in counselor if c.stance in st["sycophantic"]]


def _explain(
    label: str,
    score: float,
    parts: ScoreParts,
    probabilities: Mapping[str, float] | None,
    states: Sequence[ClinicalState],
    counselor: Sequence[CounselorTurn],
    stealth: Sequence[str],
    persisting: Sequence[str],
    res: Resources,
) -> str:
    t = res.texts
    out = [t["header"].format(label_ko=t["labels_ko"][label], label=label, score=score)]
    if probabilities is not None:
        p, n, h = (probabilities[label] for label in (PRODUCTIVE, NEUTRAL, HARMFUL))
        out.append(t["layer"].format(p=p, n=n, h=h, engine=parts.total))
    if not states:
        out.append(t["empty"])
    else:
        a, b = states[0], states[-1]
        out.append(
            t["trend"].format(
                n=len(states),
                v0=a.valence,
                v1=b.valence,
                r0=a.risk,
                r1=b.risk,
                h0=a.high_risk_mass,
                h1=b.high_risk_mass,
            )
        )
    if parts.nearest is not None:
        out.append(t["template"].format(template=parts.nearest.name, ged=parts.nearest.distance))
    if persisting:
        out.append(t["distortion"].format(names=_named(persisting, res)))
    if parts.momentum >= 0.2:
        out.append(t["momentum_up"].format(m=parts.momentum))
    elif parts.momentum <= -0.2:
        out.append(t["momentum_down"].format(m=parts.momentum))
    if parts.wall >= 0.1:
        out.append(t["wall"].format(w=parts.wall, r=max(s.risk for s in states)))
    if parts.risk_answered:
        out.append(t["risk_answered"])
    if stealth:
        what = [_named(persisting, res)] if persisting else []
        if parts.risk_rise >= float(res.model["score"]["risk_rise_min"]):
            what.append(t["stealth_risk"].format(r0=states[0].risk, r1=states[-1].risk))
        out.append(t["stealth"].format(turns=t["joiner"].join(stealth), what=t["joiner"].join(what)))
    colluding = [c.utterance_id for c in counselor if c.stance in res.stances["collusion"]]
    if colluding and label != PRODUCTIVE:
        out.append(t["collusion"].format(turns=t["joiner"].join(colluding)))
    overt = [c.utterance_id for c in counselor if c.stance in res.stances["overt"]]
    if overt:
        out.append(t["overt"].format(turns=t["joiner"].join(overt)))
    out.append(t["footer"])
    return " ".join(out)


def audit_window(turns: list[dict[str, Any]], *, config: AuditConfig | None = None) -> WindowAudit:
    """Audit one window of §2 turns (any order; sorted by seq)."""
    return audit_windows([turns], config=config)[0]


def audit_windows(
    windows: Sequence[Sequence[Mapping[str, Any]]], *, config: AuditConfig | None = None, with_states: bool = True
) -> list[WindowAudit]:
    """audit_window() for many windows: the template matching of equal-length windows runs as one numpy
    pass (same results as one by one). with_states=False leaves WindowAudit.states empty for callers that
    only print label/score/explanation (the CLI), which saves rounding every distortion of every turn."""
    with _cycle_collection_paused():
        return _audit_windows(windows, config or DEFAULT_CONFIG, with_states)


def _audit_windows(
    windows: Sequence[Sequence[Mapping[str, Any]]], config: AuditConfig, with_states: bool
) -> list[WindowAudit]:
    res = load_resources(config.data_dir)
    return _score_windows(_prepare_windows(windows, config, res), config, res, with_states)


def _prepare_windows(
    windows: Sequence[Sequence[Mapping[str, Any]]], config: AuditConfig, res: Resources
) -> list[Prepared]:
    decay, risk_decay = _carry_decays(res)
    prepared = []
    for turns in windows:
        ordered = sorted(turns, key=lambda t: int(t.get("seq", 0)))
        client = [t for t in ordered if t.get("speaker") == "client"]
        states = [extract_state(t, config=config, res=res) for t in client]
        if decay > 0.0:
            states = carry_forward(states, decay, risk_decay)
        counselor = [classify_counselor(t, config=config, res=res) for t in ordered if t.get("speaker") == "counselor"]
        codes = [tuple(t.get("client_states") or ()) if config.use_labels else () for t in client]
        texts = (
            [str(t.get("text") or "") for t in client],
            [str(t.get("text") or "") for t in ordered if t.get("speaker") == "counselor"],
        )
        prepared.append((states, counselor, codes, texts))
    return prepared


def layer_feature_rows(
    windows: Sequence[Sequence[Mapping[str, Any]]], inputs: LayerInputs, *, config: AuditConfig | None = None
) -> list[list[float]]:
    """The verdict layer's feature row of each window (§2 turns), computed as the audit computes it: what
    ``benchmarks/fit_audit_layer.py`` fits the layer on."""
    config = config or DEFAULT_CONFIG
    res = load_resources(config.data_dir)
    with _cycle_collection_paused():
        prepared = _prepare_windows(windows, config, res)
        parts = _score_parts(prepared, config)
    return [
        window_features(p, states, counselor, codes, inputs)
        for (states, counselor, codes, _), p in zip(prepared, parts, strict=True)
    ]


def audit_sessions(
    sessions: Sequence[tuple[Sequence[TurnFields], Sequence[tuple[int, int]]]],
    *,
    config: AuditConfig | None = None,
    with_states: bool = True,
) -> list[list[WindowAudit]]:
    """Per session (its turns in seq order, and its windows as half-open [start, end) turn index ranges):
    the audits audit_windows() gives for ``[turns[start:end] for start, end in bounds]``, window for window.

    Overlapping windows share turns (with stride 5 every turn is in two), so each turn's state or stance is
    extracted once per session here rather than once per window; carry_forward still runs per window, because
    it starts again from each window's first client state."""
    with _cycle_collection_paused():
        return _audit_sessions(sessions, config or DEFAULT_CONFIG, with_states)


def _audit_sessions(
    sessions: Sequence[tuple[Sequence[TurnFields], Sequence[tuple[int, int]]]], config: AuditConfig, with_states: bool
) -> list[list[WindowAudit]]:
    res = load_resources(config.data_dir)
    decay, risk_decay = _carry_decays(res)
    prepared = []
    counts = []
    for turns, bounds in sessions:
        if any(a[0] > b[0] for a, b in pairwise(turns)):
            # audit_windows() sorts each window; slicing an unsorted session would cut other windows.
            raise ValueError("audit_sessions: a session's turns must be in seq order")
        client: list[ClinicalState | None] = []
        counselor: list[CounselorTurn | None] = []
        codes: list[tuple[str, ...]] = []
        for seq, utterance_id, speaker, text, nonverbal, techniques, client_states in turns:
            codes.append(tuple(client_states or ()) if config.use_labels and speaker == "client" else ())
            if speaker == "client":
                client.append(client_state(seq, utterance_id, text, nonverbal, client_states, config=config, res=res))
                counselor.append(None)
            elif speaker == "counselor":
                client.append(None)
                counselor.append(
                    counselor_stance(seq, utterance_id, text, nonverbal, techniques, config=config, res=res)
                )
            else:
                client.append(None)
                counselor.append(None)
        for start, end in bounds:
            states = [s for s in client[start:end] if s is not None]
            if decay > 0.0:
                states = carry_forward(states, decay, risk_decay)
            window = turns[start:end]
            prepared.append(
                (
                    states,
                    [c for c in counselor[start:end] if c is not None],
                    [k for k, s in zip(codes[start:end], client[start:end], strict=True) if s is not None],
                    (
                        [str(turn[3] or "") for turn in window if turn[2] == "client"],
                        [str(turn[3] or "") for turn in window if turn[2] == "counselor"],
                    ),
                )
            )
        counts.append(len(bounds))
    audits = _score_windows(prepared, config, res, with_states)
    out = []
    first = 0
    for count in counts:
        out.append(audits[first : first + count])
        first += count
    return out


@contextmanager
def _cycle_collection_paused() -> Iterator[None]:
    """No cyclic garbage collection while a batch is audited. The engine makes many small objects and no
    reference cycles (reference counting frees them), yet their number triggers full collections, each a walk
    over the whole process heap (Django, numpy, the batch's turns): measured at 15 % of audit_rows (2 full
    collections, 0.46 s of 2.98 s CPU for 4,950 windows). Cycles made meanwhile are collected afterwards."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _carry_decays(res: Resources) -> tuple[float, float | None]:
    decay = float(res.model["extractor"].get("carry_decay", 0.0))
    risk_decay = res.model["extractor"].get("risk_carry_decay")
    return decay, None if risk_decay is None else float(risk_decay)


def _score_windows(
    prepared: Sequence[Prepared], config: AuditConfig, res: Resources, with_states: bool
) -> list[WindowAudit]:
    """Score terms per window (template matching of equal-length windows in one numpy pass), then the verdict:
    the layer's (one matrix product for the batch) or the engine's thresholds."""
    parts = _score_parts(prepared, config)
    layer = load_layer(config.data_dir) if config.learned_layer else None
    if layer is None or not prepared:
        verdicts: list[Verdict] = [(_label(p.total, res.model["labels"]), p.total, None) for p in parts]
    else:
        rows = np.array(
            [
                window_features(p, states, counselor, codes, layer.inputs)
                for (states, counselor, codes, _), p in zip(prepared, parts, strict=True)
            ]
        )
        probabilities = layer.verdicts(rows, [texts for *_, texts in prepared])
        verdicts = []
        for row in probabilities.tolist():
            p = dict(zip(layer.classes, row, strict=True))
            verdicts.append((max(p, key=p.__getitem__), p[PRODUCTIVE] - p[HARMFUL], p))
    return [
        _finish_audit(states, counselor, p, verdict, res, with_states)
        for (states, counselor, *_), p, verdict in zip(prepared, parts, verdicts, strict=True)
    ]


def _score_parts(prepared: Sequence[Prepared], config: AuditConfig) -> list[ScoreParts]:
    all_matches = match_templates_many([states for states, *_ in prepared], config)
    return [
        score_window(states, counselor, config, matches)
        for (states, counselor, *_), matches in zip(prepared, all_matches, strict=True)
    ]


def _finish_audit(
    states: list[ClinicalState],
    counselor: list[CounselorTurn],
    parts: ScoreParts,
    verdict: Verdict,
    res: Resources,
    with_states: bool,
) -> WindowAudit:
    label, score, probabilities = verdict
    persisting = _persisting_distortions(states, res)
    stealth = _stealth_turns(label, parts, counselor, persisting, res)
    components = {
        "template_preference": round(parts.preference, 4),
        "momentum": round(parts.momentum, 4),
        "penalty_wall": round(parts.wall, 4),
        "sycophancy": round(parts.sycophancy, 4),
        "overt_harm": round(parts.overt, 4),
        "drift": round(parts.drift, 4),
    }
    if probabilities is not None:
        components["engine_score"] = round(parts.total, 4)
    return WindowAudit(
        label=label,
        score=round(score, 4),
        explanation=_explain(label, score, parts, probabilities, states, counselor, stealth, persisting, res),
        states=[s.as_dict(res.classes) for s in states] if with_states else [],
        sycophancy_turns=stealth,
        clinical_states=tuple(states),
        nearest_template=parts.nearest.name if parts.nearest else "",
        components=components,
    )
