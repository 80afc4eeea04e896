"""A window in the trainee's words (their session page)."""

from __future__ import annotations

import re
from typing import Any

# The trainee's words for a window (their page; the supervisor's admin keeps the engine's terms).
TRAINEE_LABEL_KO = {
    "productive": "나아지는 흐름",
    # not "no big change": a neutral window may still see the mood move a lot (the next sentence says how)
    "neutral": "좋아졌는지 나빠졌는지 뚜렷하지 않은 흐름",
    "harmful": "함께 살펴볼 흐름",
}
_STEADY = 0.1


def _direction(before: float, after: float, up: str, down: str, same: str) -> str:
    """``up``, ``down`` or ``same`` as ``after`` differs from ``before`` by more than ``_STEADY``."""
    if after - before > _STEADY:
        return up
    if before - after > _STEADY:
        return down
    return same


def trainee_summary(audit: dict[str, Any]) -> str:
    """A window in plain Korean: where it is, the flow, how the client's mood and risk moved, and the turns
    to look at again. No engine terms (template names, graph distances, the penalty wall), no English words."""
    return f"{window_span(audit)}: {window_story(audit)}"


def window_span(audit: dict[str, Any]) -> str:
    """Which turns the window covers, counted from 1 as the trainee reads the transcript ("1–10번째 발화"),
    as the stage strip counts them; the stored seq starts at 0."""
    first, last = audit.get("first_seq"), audit.get("last_seq")
    if not isinstance(first, int) or not isinstance(last, int):
        return "발화"
    return f"{first + 1}–{last + 1}번째 발화"


def window_story(audit: dict[str, Any]) -> str:
    """trainee_summary() without the span (the page links the span to the window's first turn)."""
    trace = audit.get("trace") or []
    parts = [f"{TRAINEE_LABEL_KO.get(audit.get('label'), '판정 없음')}."]
    if trace:
        v0, v1 = float(trace[0].get("valence") or 0.0), float(trace[-1].get("valence") or 0.0)
        r0, r1 = float(trace[0].get("risk") or 0.0), float(trace[-1].get("risk") or 0.0)
        moved = _direction(v0, v1, "up", "down", "same")
        # The verdict weighs the whole window (its path, risk, distortions), the mood only its two ends: when
        # they point apart the sentence says so rather than reading as a contradiction.
        against = (audit.get("label"), moved) in {("productive", "down"), ("harmful", "up")}
        parts.append(
            ("다만 구간 끝에서 내담자의 정서는 처음보다 " if against else "내담자의 정서가 ")
            + {"up": "밝아졌어요", "down": "가라앉았어요", "same": "비슷하게 이어졌어요"}[moved]
            + f" ({v0:+.2f} → {v1:+.2f})."
        )
        if r1 - r0 > 0.05:
            parts.append(f"위험 신호가 높아졌어요 ({r0:.2f} → {r1:.2f}). 안전을 직접 묻는 연습이 도움이 됩니다.")
        elif r0 - r1 > 0.05:
            parts.append(f"위험 신호는 낮아졌어요 ({r0:.2f} → {r1:.2f}).")
    turns = audit.get("sycophancy_turns") or []
    if turns:
        parts.append(
            f"상담자 발화 {', '.join(turns)}에서는 공감과 지지만 이어지고, 내담자의 부정적인 생각을 함께 "
            "살펴보지는 않았어요."
        )
    return " ".join(parts)


# The supervisor's pages (session admin, safety queue): the engine's explanation with its terms in Korean.
# The engine's own text (``audit_trajectories``, CONTRACT §4) keeps them; the codes stay in a tooltip.
LABEL_KO = {"productive": "생산적", "neutral": "중립적", "harmful": "해로운"}
TEMPLATE_KO = {
    "steady_recovery": "꾸준한 회복",
    "late_breakthrough": "뒤늦은 돌파",
    "crisis_stabilised": "위기 안정화",
    "opening_up": "마음 열기",
    "flat_mild_distress": "가벼운 고통이 이어짐",
    "flat_engaged": "변화 없이 참여",
    "steady_deterioration": "꾸준한 악화",
    "persistent_distortion": "왜곡이 이어짐",
    "risk_escalation": "위험 상승",
}


def _template(match: re.Match) -> str:
    name, distance = match.group(1), match.group(2)
    return f"가장 가까운 궤적 유형: {TEMPLATE_KO.get(name, name)} (그래프 거리 {distance})"


_TERMS = (
    (re.compile(r"가장 가까운 템플릿: ([a-z_]+) \(GED ([-+0-9.]+)\)"), _template),
    (re.compile(r"\(momentum ([-+0-9.]+)\)"), r"(흐름 세기 \1)"),
    (re.compile(r"\(penalty_wall ([-+0-9.]+), 최대 risk ([-+0-9.]+)\)"), r"(페널티 벽 \1, 최대 위험 \2)"),
    (re.compile(r"\(risk ([-+0-9.]+) → ([-+0-9.]+)\)"), r"(위험 \1 → \2)"),
    (re.compile(r"위험\(risk ([-+0-9.]+) → ([-+0-9.]+)\)"), r"위험 \1 → \2"),
    (re.compile(r"판정층\(verdict layer\) 확률"), "판정 확률"),
    # the term and a space before it ("감지되었습니다 (overt_harm)." reads "감지되었습니다.")
    (
        re.compile(
            r" ?\((high_risk_mass|valence|risk|risk_response|colluding|overt_harm|stealth sycophancy|engine_score)\)"
        ),
        "",
    ),
    (re.compile(r"\(([a-z]+)\)(?=, 점수)"), ""),
)


# The explanation's first sentence, the verdict and score ("궤적 판정: 해로운, 점수 -0.40."), once its terms are gone.
_VERDICT = re.compile(r"^궤적 판정: [^,.]+, 점수 [-+0-9.]+\.\s*")


def supervisor_explanation(text: str, *, verdict: bool = True) -> str:
    """The engine's explanation without its English terms ("GED", "momentum", "penalty_wall",
    "high_risk_mass", template names): the Korean words a supervisor reads. ``verdict=False`` leaves out its
    first sentence, for a page that shows the label and the score beside it already."""
    for pattern, replacement in _TERMS:
        text = pattern.sub(replacement, text)
    return text if verdict else _VERDICT.sub("", text, count=1)
