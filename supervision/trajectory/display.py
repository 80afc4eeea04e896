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
