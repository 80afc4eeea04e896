"""The report's pictures as inline SVG drawn on the server (no JavaScript), like the trainee charts:
per-label F1 as bars (worst first), a confusion matrix as a heat map, a rater's versions as a trend.
Each has a ``<title>``/``<desc>`` in words and the page puts the numbers in a table next to it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from supervision.feedback.charts import _FONT, _svg

from .scoring import label_rank

_BAR = "#2563eb"
_LOW = "#dc2626"


def label_name(axis: str, code: str) -> str:
    from taxonomy import catalogue

    if axis == "techniques" and code in catalogue.TECHNIQUES_BY_CODE:
        return f"{catalogue.TECHNIQUES_BY_CODE[code].ko} ({code})"
    if axis == "client_states" and code in catalogue.CLIENT_STATES_BY_CODE:
        return f"{catalogue.CLIENT_STATES_BY_CODE[code].ko} ({code})"
    return code


def worst_first(labels: Mapping[str, Mapping], axis: str) -> list[tuple[str, Mapping]]:
    return sorted(labels.items(), key=lambda item: (item[1].get("f1") or 0.0, label_rank(axis, item[0])))


def f1_bars_svg(labels: Mapping[str, Mapping], axis: str, *, ident: str) -> str:
    rows = worst_first(labels, axis)
    if not rows:
        return ""
    left, width, row_h = 250, 620, 22
    height = 30 + row_h * len(rows)
    body = [
        f'<text x="{left}" y="14" font-size="11" fill="#555" {_FONT}>F1 0</text>',
        f'<text x="{left + width // 2}" y="14" font-size="11" fill="#555" text-anchor="middle" {_FONT}>0.5</text>',
        f'<text x="{left + width}" y="14" font-size="11" fill="#555" text-anchor="end" {_FONT}>1</text>',
    ]
    for i, (code, figures) in enumerate(rows):
        y = 22 + i * row_h
        f1 = float(figures.get("f1") or 0.0)
        colour = _LOW if f1 < 0.5 else _BAR
        body.append(
            f'<text x="{left - 8}" y="{y + 14}" font-size="12" text-anchor="end" {_FONT}>'
            f"{escape(label_name(axis, code))}</text>"
            f'<rect x="{left}" y="{y + 3}" width="{width}" height="{row_h - 8}" fill="#f1f5f9"/>'
            f'<rect x="{left}" y="{y + 3}" width="{max(1.0, f1 * width):.1f}" height="{row_h - 8}" fill="{colour}"/>'
            + (
                f'<text x="{left + f1 * width - 6:.1f}" y="{y + 14}" font-size="11" fill="#fff" text-anchor="end" {_FONT}>'
                if f1 > 0.8
                else f'<text x="{left + f1 * width + 6:.1f}" y="{y + 14}" font-size="11" {_FONT}>'
            )
            + f"{f1:.2f} (n={int(figures.get('support') or 0)})</text>"
        )
    worst = ", ".join(f"{code} {float(f.get('f1') or 0):.2f}" for code, f in rows[:3])
    return _svg(left + width + 20, height, "라벨별 F1 (낮은 순)", f"가장 낮은 라벨: {worst}", body, ident)


def confusion_svg(confusion: Mapping[str, Mapping[str, int]], axis: str, *, ident: str) -> str:
    classes = sorted(
        set(confusion) | {c for row in confusion.values() for c in row}, key=lambda c: (label_rank(axis, c), c)
    )
    if not classes:
        return ""
    cell, left, top = 44, 110, 90
    size = len(classes)
    peak = max((n for row in confusion.values() for n in row.values()), default=1) or 1
    body = [
        f'<text x="{left + size * cell / 2}" y="14" font-size="12" text-anchor="middle" {_FONT}>평가자 →</text>',
        f'<text x="12" y="{top - 8}" font-size="12" {_FONT}>골든 ↓</text>',
    ]
    for j, name in enumerate(classes):
        x = left + j * cell + cell / 2
        body.append(
            f'<text x="{x}" y="{top - 8}" font-size="11" text-anchor="start" '
            f'transform="rotate(-45 {x} {top - 8})" {_FONT}>{escape(name)}</text>'
        )
    for i, ref in enumerate(classes):
        y = top + i * cell
        body.append(
            f'<text x="{left - 6}" y="{y + cell / 2 + 4}" font-size="11" text-anchor="end" {_FONT}>{escape(ref)}</text>'
        )
        for j, rat in enumerate(classes):
            n = int(confusion.get(ref, {}).get(rat, 0))
            shade = n / peak
            fill = (
                f"rgba(22,101,52,{0.12 + 0.88 * shade:.2f})" if i == j else f"rgba(185,28,28,{0.1 + 0.9 * shade:.2f})"
            )
            fill = fill if n else "#f8fafc"
            ink = "#fff" if shade > 0.55 else "#111"
            body.append(
                f'<rect x="{left + j * cell}" y="{y}" width="{cell - 2}" height="{cell - 2}" fill="{fill}"/>'
                + (
                    f'<text x="{left + j * cell + cell / 2 - 1}" y="{y + cell / 2 + 4}" font-size="11" '
                    f'text-anchor="middle" fill="{ink}" {_FONT}>{n}</text>'
                    if n
                    else ""
                )
            )
    off = sum(n for r, row in confusion.items() for c, n in row.items() if r != c)
    width = left + size * cell + 20
    # Drawn at its own size (a two-class matrix is not blown up to the width of a sixteen-class one).
    picture = _svg(
        width, top + size * cell + 10, "혼동 행렬 (골든 → 평가자)", f"{size}개 클래스, 불일치 {off}건", body, ident
    )
    return f'<div style="max-width:{width}px">{picture}</div>'


def trend_svg(points: Sequence[Mapping], *, ident: str = "trend") -> str:
    """``points``: ``[{"label", "values": {series: value or None}}]`` oldest first; one line per series."""
    if len(points) < 1:
        return ""
    series = list(points[0]["values"])
    colours = ["#2563eb", "#16a34a", "#9333ea", "#ea580c"]
    left, width, top, height = 50, 600, 20, 180
    step = width / max(1, len(points) - 1)
    body = [
        f'<line x1="{left}" y1="{top + height}" x2="{left + width}" y2="{top + height}" stroke="#999"/>',
        f'<text x="{left - 6}" y="{top + 4}" font-size="11" text-anchor="end" {_FONT}>1</text>',
        f'<text x="{left - 6}" y="{top + height + 4}" font-size="11" text-anchor="end" {_FONT}>0</text>',
    ]
    for i, point in enumerate(points):
        x = left + i * step if len(points) > 1 else left + width / 2
        body.append(
            f'<text x="{x}" y="{top + height + 18}" font-size="11" text-anchor="middle" {_FONT}>'
            f"{escape(str(point['label']))}</text>"
        )
    for k, name in enumerate(series):
        colour = colours[k % len(colours)]
        coords = [
            (left + i * step if len(points) > 1 else left + width / 2, top + height * (1 - float(p["values"][name])))
            for i, p in enumerate(points)
            if p["values"].get(name) is not None
        ]
        if len(coords) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in coords)
            body.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        body += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{colour}"/>' for x, y in coords]
        body.append(
            f'<text x="{left + width + 8}" y="{top + 14 + 16 * k}" font-size="11" fill="{colour}" {_FONT}>'
            f"{escape(name)}</text>"
        )
    return _svg(left + width + 140, top + height + 30, "버전별 추이", f"{len(points)}개 버전", body, ident)
