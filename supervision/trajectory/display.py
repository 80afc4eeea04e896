"""A tiny inline SVG of a window's state trace (valence and risk per client turn), for admin and pages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

WIDTH, HEIGHT, PAD = 240, 80, 6


def _points(values: Sequence[float], lo: float, hi: float) -> str:
    n = len(values)
    span_x = WIDTH - 2 * PAD
    span_y = HEIGHT - 2 * PAD
    out = []
    for i, v in enumerate(values):
        x = PAD + (span_x * i / (n - 1) if n > 1 else span_x / 2)
        frac = (min(hi, max(lo, float(v))) - lo) / (hi - lo)
        out.append(f"{x:.1f},{PAD + span_y * (1 - frac):.1f}")
    return " ".join(out)


def trace_svg(trace: Sequence[dict[str, Any]]) -> SafeString:
    """Valence (blue, −1…1) and risk (red, 0…1) per client turn; the dashed line is valence 0 / risk 0.5.

    Only numbers the engine produced go into the markup, and format_html escapes the title text.
    """
    if not trace:
        return format_html("<span>{}</span>", "내담자 발화 없음")
    valence = _points([s.get("valence") or 0.0 for s in trace], -1.0, 1.0)
    risk = _points([s.get("risk") or 0.0 for s in trace], 0.0, 1.0)
    mid = HEIGHT / 2
    body = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" class="trajectory-trace">'
        f'<line x1="{PAD}" y1="{mid}" x2="{WIDTH - PAD}" y2="{mid}" stroke="#bbb" stroke-dasharray="3,3"/>'
        f'<polyline fill="none" stroke="#1f6fb2" stroke-width="2" points="{valence}"/>'
        f'<polyline fill="none" stroke="#c0392b" stroke-width="2" points="{risk}"/>'
        "</svg>"
    )
    legend = format_html(
        '<div><span class="trace-valence">━ {}</span> <span class="trace-risk">━ {}</span></div>',
        "정서가 (valence)",
        "위험 (risk)",
    )
    return mark_safe(body) + legend  # body holds only formatted floats and constants


# The trainee's words for a window (their page; the supervisor's admin keeps the engine's terms).
TRAINEE_LABEL_KO = {
    "productive": "나아지는 흐름",
    "neutral": "큰 변화 없는 흐름",
    "harmful": "함께 살펴볼 흐름",
}
_STEADY = 0.1


def _direction(before: float, after: float, up: str, down: str, same: str) -> str:
    if after - before > _STEADY:
        return up
    if before - after > _STEADY:
        return down
    return same


def trainee_summary(audit: dict[str, Any]) -> str:
    """A window in plain Korean: the flow, how the client's mood and risk moved, and the turns to look at
    again. No engine terms (template names, graph distances, the penalty wall) and no English words."""
    trace = audit.get("trace") or []
    first, last = audit.get("first_seq"), audit.get("last_seq")
    parts = [f"발화 {first}–{last}: {TRAINEE_LABEL_KO.get(audit.get('label'), '판정 없음')}."]
    if trace:
        v0, v1 = float(trace[0].get("valence") or 0.0), float(trace[-1].get("valence") or 0.0)
        r0, r1 = float(trace[0].get("risk") or 0.0), float(trace[-1].get("risk") or 0.0)
        parts.append(
            "내담자의 정서가 "
            + _direction(v0, v1, "밝아졌어요", "가라앉았어요", "비슷하게 이어졌어요")
            + f" ({v0:+.2f} → {v1:+.2f})."
        )
        if r1 - r0 > 0.05:
            parts.append(f"위험 신호가 높아졌어요 ({r0:.2f} → {r1:.2f}). 안전을 직접 묻는 연습이 도움이 됩니다.")
    turns = audit.get("sycophancy_turns") or []
    if turns:
        parts.append(
            f"상담자 발화 {', '.join(turns)}에서는 공감과 지지만 이어지고, 내담자의 부정적인 생각을 함께 "
            "살펴보지는 않았어요."
        )
    return " ".join(parts)
