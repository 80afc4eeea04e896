"""Per-turn clinical states (client) and stances (counselor) from lexicon rules and curated labels."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .config import DEFAULT_CONFIG, AuditConfig
from .lexicon import Hit, normalise
from .resources import Effect, Resources, load_resources


@dataclass(frozen=True, slots=True)
class ClinicalState:
    """A client turn as a point in clinical space.

    valence in [-1, 1], arousal and risk in [0, 1]; `distribution` sums to 1 over the distortion classes
    with `none` last; `high_risk_mass` is the severity-weighted distortion mass in [0, 1].
    """

    seq: int
    utterance_id: str
    valence: float
    arousal: float
    risk: float
    distribution: tuple[float, ...]
    high_risk_mass: float
    top_distortion: str
    cue_count: int  # lexicon hits + known labels; 0 means "no evidence", state stays neutral
    safety: bool = False  # a safety/coping cue (negative risk push) or a negated risk cue in this turn

    def as_dict(self, classes: Sequence[str]) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "utterance_id": self.utterance_id,
            "valence": round(self.valence, 4),
            "arousal": round(self.arousal, 4),
            "risk": round(self.risk, 4),
            "high_risk_mass": round(self.high_risk_mass, 4),
            "top_distortion": self.top_distortion,
            "distortions": {c: round(p, 4) for c, p in zip(classes, self.distribution, strict=True)},
        }


@dataclass(frozen=True, slots=True)
class CounselorTurn:
    seq: int
    utterance_id: str
    stance: str
    techniques: tuple[str, ...]
    from_labels: bool


class _Accumulator:
    """Sums pushes before squashing them into the state's ranges."""

    __slots__ = ("arousal", "cues", "dist", "risk", "safety", "valence")

    def __init__(self, n_classes: int) -> None:
        self.valence = 0.0
        self.arousal = 0.0
        self.risk = 0.0
        self.dist = [0.0] * n_classes
        self.cues = 0
        self.safety = False

    def add(self, effect: Effect, scale: float, negated: bool, neg_factor: float, pos_factor: float = 0.0) -> None:
        self.cues += 1
        if (effect.risk < 0.0) != negated and effect.risk != 0.0:
            self.safety = True
        if negated:
            # Negation is asymmetric: "I'm not worthless" is only mildly positive (neg_factor), while "I'm not
            # okay" / "not looking forward to it" / "안 기대돼요" is nearly as negative as its opposite
            # (pos_factor). The distortion and risk cues are cancelled either way.
            self.valence += effect.valence * (pos_factor if effect.valence > 0.0 else neg_factor) * scale
            return
        self.valence += effect.valence * scale
        self.arousal += effect.arousal * scale
        self.risk += effect.risk * scale
        for idx, w in effect.distortions:
            self.dist[idx] += w * scale


def _turn_text(text: Any, nonverbal: Iterable[Any] | None) -> str:
    text = text or ""
    if nonverbal:
        return f"{text} {' '.join(str(x) for x in nonverbal)}"
    return str(text)


def _finish(acc: _Accumulator, seq: Any, utterance_id: Any, res: Resources) -> ClinicalState:
    # Plain floats, not numpy: for 11 classes the array set-up cost more than the arithmetic (profiled).
    ex = res.model["extractor"]
    valence = math.tanh(acc.valence * float(ex["valence_gain"]))
    arousal = 1.0 - math.exp(-max(0.0, float(ex["arousal_base"]) + acc.arousal))
    risk = 1.0 - math.exp(-max(0.0, acc.risk))
    if any(d > 0.0 for d in acc.dist[:-1]):
        raw = [d if d > 0.0 else 0.0 for d in acc.dist[:-1]]
        raw.append(float(ex["none_base"]))
        z = sum(raw)
        dist = [x / z for x in raw]
        hmass = sum(p * w for p, w in zip(dist, res.severity_weights, strict=True))
        top = res.classes[dist.index(max(dist))]
    else:
        # No distortion cue (most turns): all mass on none, which is what the general branch computes, exactly.
        dist = [0.0] * (len(res.classes) - 1) + [1.0]
        hmass = res.severity_weights[-1]
        top = res.classes[-1]
    return ClinicalState(
        seq=int(seq),
        utterance_id=str(utterance_id),
        valence=valence,
        arousal=arousal,
        risk=risk,
        distribution=tuple(dist),
        high_risk_mass=hmass,
        top_distortion=top,
        cue_count=acc.cues,
        safety=acc.safety,
    )


def extract_state(
    turn: Mapping[str, Any], *, config: AuditConfig = DEFAULT_CONFIG, res: Resources | None = None
) -> ClinicalState:
    """Clinical state of one client turn."""
    return client_state(
        turn.get("seq", 0),
        turn.get("utterance_id", ""),
        turn.get("text"),
        turn.get("nonverbal"),
        turn.get("client_states"),
        config=config,
        res=res,
    )


def client_state(
    seq: Any,
    utterance_id: Any,
    text: Any,
    nonverbal: Iterable[Any] | None,
    client_states: Iterable[str] | None,
    *,
    config: AuditConfig = DEFAULT_CONFIG,
    res: Resources | None = None,
) -> ClinicalState:
    """extract_state() on a turn's fields, for callers that hold turns as tuples rather than dicts."""
    res = res or load_resources(config.data_dir)
    acc = _Accumulator(len(res.classes))
    neg_factor, pos_factor = res.negated_valence_factor, res.negated_positive_factor
    if config.use_text:
        # A sentence-initial "Okay." / "Yeah," is turn-taking, not a report of feeling okay.
        text = res.discourse_re.sub(" ", normalise(_turn_text(text, nonverbal)))
        hits: list[Hit[Effect]] = res.client_lexicon.scan(text)
        tw = float(res.model["extractor"]["text_weight"])
        # In a turn that reports a risk behaviour, approach and relief words describe that behaviour
        # ("Maybe I'll make myself throw up", "it's the only thing that helps"): they are damped, while
        # safety cues (negative risk push) keep their full weight.
        damp = 1.0
        if any(h.payload.risk > 0.0 and not h.negated for h in hits):
            damp = float(res.model["extractor"].get("risk_context_positive_factor", 1.0))
        for hit in hits:
            e = hit.payload
            # A downtoner ("a bit tired", "좀 불안") softens reported distress, the resting state of many
            # ordinary sessions; it does not discount a small gain ("a little calmer" is still movement).
            hs = hit.scale if hit.scale >= 1.0 or (e.valence < 0.0 and not hit.negated) else 1.0
            scale = hs * tw * (damp if e.valence > 0.0 and e.risk == 0.0 and not hit.negated else 1.0)
            acc.add(e, scale, hit.negated, neg_factor, pos_factor)
        # Clause-level patterns (a certainty adverb with a predictive ending, "분명 … 거예요") catch
        # distortions whose words vary but whose grammar does not. The same negation scope as for words
        # applies around the match ("I don't think I can handle it", "할 수 있을 것 같지 않아요").
        scan_negated = res.client_lexicon.negated
        for pattern, effect in res.client_patterns:
            found = pattern.search(text)
            if found is not None:
                negated = scan_negated(text, found.start(), found.end())
                pos = effect.valence > 0.0 and effect.risk == 0.0 and not negated
                acc.add(effect, tw * (damp if pos else 1.0), negated, neg_factor, pos_factor)
    if config.use_labels:
        lw = float(res.model["extractor"]["label_weight"])
        for code in client_states or ():
            effect = res.client_labels.get(code)
            if effect is not None:
                acc.add(effect, lw, False, neg_factor)
    return _finish(acc, seq, utterance_id, res)


def carry_forward(
    states: Sequence[ClinicalState], decay: float, risk_decay: float | None = None
) -> list[ClinicalState]:
    """Client turns with no evidence (no cue, no label) keep the previous state, decayed toward neutral.

    A turn like "We moved the couch." says nothing about the clinical state; resetting it to neutral made
    a mildly distressed opening followed by small talk look like recovery (momentum and templates read the
    jump from -0.5 to 0 as improvement). Carrying the last observed state forward means "unchanged as far
    as we know"; the decay lets a long run of silence drift back slowly.

    Risk also persists across turns that do have cues: a disclosed risk (cutting, a stockpile, drinking
    every night) is not withdrawn because the next turn talks about something else. Unless the turn has a
    safety cue (a negative risk push such as a safety plan, or a negated risk phrase) or the client sounds
    better in it (its own valence is not negative), its risk is at least the previous turn's risk times
    `risk_decay`. Without this a window that goes quiet about the risk while the client stays low read as a
    recovery (momentum and the crisis_stabilised template rewarded the drop to zero).
    """
    out: list[ClinicalState] = []
    prev: ClinicalState | None = None
    for s in states:
        if s.cue_count == 0 and prev is not None:
            none_idx = len(prev.distribution) - 1
            dist = [p * decay for p in prev.distribution]
            dist[none_idx] += 1.0 - decay
            s = ClinicalState(
                seq=s.seq,
                utterance_id=s.utterance_id,
                valence=prev.valence * decay,
                arousal=prev.arousal,
                risk=prev.risk * decay,
                distribution=tuple(dist),
                high_risk_mass=prev.high_risk_mass * decay,
                top_distortion=prev.top_distortion,
                cue_count=0,
            )
        elif (
            risk_decay is not None
            and prev is not None
            and not s.safety
            and s.valence < 0.0
            and s.risk < prev.risk * risk_decay
        ):
            s = replace(s, risk=prev.risk * risk_decay)
        out.append(s)
        prev = s
    return out


def _text_stance(text: str, res: Resources) -> str | None:
    scores: dict[str, float] = {}
    for hit in res.counselor_lexicon.scan(text):
        if hit.negated:
            continue
        cue = hit.payload
        scores[cue.stance] = scores.get(cue.stance, 0.0) + cue.weight * max(hit.scale, 1.0)  # downtoners: client only
    if not scores:
        return None
    priority = res.stances["text_priority"]
    # Highest score wins; ties go to the clinically more important stance (priority order).
    return max(scores, key=lambda s: (scores[s], -priority.index(s) if s in priority else -99))


def _label_stance(techniques: Iterable[str], res: Resources) -> str | None:
    stances = {res.technique_stance[t] for t in techniques if t in res.technique_stance}
    if not stances:
        return None
    # An active stance in the turn (e.g. a challenge next to an empathy label) characterises it.
    for s in res.stances["label_priority"]:
        if s in stances:
            return s
    return next(iter(sorted(stances)))


def classify_counselor(
    turn: Mapping[str, Any], *, config: AuditConfig = DEFAULT_CONFIG, res: Resources | None = None
) -> CounselorTurn:
    """Counselor stance: from technique labels when present, from phrasing otherwise.

    Text can still override labels with a harmful or colluding stance, because a turn labelled
    "interpretation" may in fact endorse the client's distortion.
    """
    return counselor_stance(
        turn.get("seq", 0),
        turn.get("utterance_id", ""),
        turn.get("text"),
        turn.get("nonverbal"),
        turn.get("techniques"),
        config=config,
        res=res,
    )


def counselor_stance(
    seq: Any,
    utterance_id: Any,
    text: Any,
    nonverbal: Iterable[Any] | None,
    techniques: Iterable[str] | None,
    *,
    config: AuditConfig = DEFAULT_CONFIG,
    res: Resources | None = None,
) -> CounselorTurn:
    """classify_counselor() on a turn's fields, for callers that hold turns as tuples rather than dicts."""
    res = res or load_resources(config.data_dir)
    techniques = tuple(techniques or ())
    label = _label_stance(techniques, res) if config.use_labels else None
    text = _turn_text(text, nonverbal) if config.use_text else ""
    txt = _text_stance(text, res) if text else None
    stance = label
    if stance is None or (txt is not None and txt in res.stances["text_overrides_labels"]):
        stance = txt or label
    return CounselorTurn(
        seq=int(seq),
        utterance_id=str(utterance_id),
        stance=stance or res.stances["neutral"],
        techniques=techniques if config.use_labels else (),  # the labels the audit reads (the verdict layer's too)
        from_labels=label is not None,
    )
