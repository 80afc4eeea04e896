"""The report's pictures as inline SVG drawn on the server (no JavaScript), like the trainee charts:
per-label F1 as bars (worst first), a confusion matrix as a heat map, a rater's versions as a trend.
Each has a ``<title>``/``<desc>`` in words and the page puts the numbers in a table next to it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from supervision.feedback.charts import _FONT, _svg, label_width

from .scoring import label_rank

_BAR = "#2563eb"
_LOW = "#dc2626"


def label_name(axis: str, code: str) -> str:
    """ "공감 (empathy)" for a technique or client state; the code itself on the other axes."""
    ko = label_ko(axis, code)
    return f"{ko} ({code})" if ko != code else code


def label_named(axis: str, code: object) -> str:
    """A stage's or a dialog act's value in a table cell: the Korean name with the code beside it."""
    if not isinstance(code, str):
        return "—" if code is None else str(code)
    ko = label_ko(axis, code)
    return f"{ko} ({code})" if ko != code else code


def label_ko(axis: str, code: str) -> str:
    from taxonomy import catalogue

    if axis == "techniques" and code in catalogue.TECHNIQUES_BY_CODE:
        return catalogue.TECHNIQUES_BY_CODE[code].ko
    if axis == "client_states" and code in catalogue.CLIENT_STATES_BY_CODE:
        return catalogue.CLIENT_STATES_BY_CODE[code].ko
    if axis == "dialog_act":
        act = next((act for act in catalogue.DIALOG_ACTS if act.code == code), None)
        if act is not None:
            return act.ko
        if code == "none":
            return "대화행위 없음"
    return code


def worst_first(labels: Mapping[str, Mapping], axis: str) -> list[tuple[str, Mapping]]:
    return sorted(labels.items(), key=lambda item: (item[1].get("f1") or 0.0, label_rank(axis, item[0])))


def f1_bars_svg(labels: Mapping[str, Mapping], axis: str, *, ident: str, compact: bool = False) -> str:
    """One bar per label, worst first. ``compact`` (phones): each label's name on its own line above its bar,
    drawn about as wide as a phone, so the text stays at its size instead of shrinking with the picture."""
    rows = worst_first(labels, axis)
    if not rows:
        return ""
    names = [label_name(axis, code) for code, _figures in rows]
    if compact:
        left, width, row_h, name_h = 0, 270, 38, 16
    else:
        # The names are right-aligned against the bars: the column is as wide as the longest one needs
        # ("부정적 자기인식 (negative_self_perception)" was cut at the picture's left edge).
        left = max(250, round(max(label_width(name, 12) for name in names)) + 12)
        # 560: the whole picture (about 855 wide) fits a 1280-px admin page beside its menu at 100 %
        width, row_h, name_h = 560, 22, 0
    height = 30 + row_h * len(rows)
    body = [
        f'<text x="{left}" y="14" font-size="11" fill="#555" {_FONT}>F1 0</text>',
        f'<text x="{left + width // 2}" y="14" font-size="11" fill="#555" text-anchor="middle" {_FONT}>0.5</text>',
        f'<text x="{left + width}" y="14" font-size="11" fill="#555" text-anchor="end" {_FONT}>1</text>',
    ]
    for i, ((_code, figures), name) in enumerate(zip(rows, names, strict=True)):
        y = 22 + i * row_h
        bar_y = y + name_h
        f1 = float(figures.get("f1") or 0.0)
        colour = _LOW if f1 < 0.5 else _BAR
        name = escape(name)
        body.append(
            (
                f'<text x="0" y="{y + 12}" font-size="12" {_FONT}>{name}</text>'
                if compact
                else f'<text x="{left - 8}" y="{y + 14}" font-size="12" text-anchor="end" {_FONT}>{name}</text>'
            )
            + f'<rect x="{left}" y="{bar_y + 3}" width="{width}" height="14" fill="#f1f5f9"/>'
            f'<rect x="{left}" y="{bar_y + 3}" width="{max(1.0, f1 * width):.1f}" height="14" fill="{colour}"/>'
            + (
                f'<text x="{left + f1 * width - 6:.1f}" y="{bar_y + 14}" font-size="11" fill="#fff" text-anchor="end" {_FONT}>'
                if f1 > 0.8
                else f'<text x="{left + f1 * width + 6:.1f}" y="{bar_y + 14}" font-size="11" {_FONT}>'
            )
            + f"{f1:.2f} (n={int(figures.get('support') or 0)})</text>"
        )
    worst = ", ".join(f"{code} {float(f.get('f1') or 0):.2f}" for code, f in rows[:3])
    # The compact drawing leaves room right of a bar for the figures written after it (up to F1 0.8).
    return _svg(
        left + width + (90 if compact else 20), height, "라벨별 F1 (낮은 순)", f"가장 낮은 라벨: {worst}", body, ident
    )


def confusion_svg(confusion: Mapping[str, Mapping[str, int]], axis: str, *, ident: str) -> str:
    classes = sorted(
        set(confusion) | {c for row in confusion.values() for c in row}, key=lambda c: (label_rank(axis, c), c)
    )
    if not classes:
        return ""
    # Korean names with the code beside them, as the queue and the tables name them (a dialog act was its bare
    # code); the margins grow with the longest name (the column names are turned 45°).
    names = {c: label_named(axis, c) for c in classes}
    longest = max(label_width(name, 11) for name in names.values())
    cell, left, top = 44, max(110, round(longest) + 12), max(90, round(longest * 0.72) + 24)
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
            f'transform="rotate(-45 {x} {top - 8})" {_FONT}>{escape(names[name])}</text>'
        )
    for i, ref in enumerate(classes):
        y = top + i * cell
        body.append(
            f'<text x="{left - 6}" y="{y + cell / 2 + 4}" font-size="11" text-anchor="end" {_FONT}>{escape(names[ref])}</text>'
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
    # Drawn at its own size (a two-class matrix is not blown up to the width of a sixteen-class one). Not with
    # a style attribute: the Content-Security-Policy drops those, and did drop this one.
    return _svg(
        round(left + (size - 0.5) * cell + max(longest * 0.72 + 8, cell / 2 + 20)),  # the last column's name too
        top + size * cell + 10,
        "혼동 행렬 (골든 → 평가자)",
        f"{size}개 클래스, 불일치 {off}건",
        body,
        ident,
        natural=True,
    )


def trend_svg(points: Sequence[Mapping], *, ident: str = "trend", compact: bool = False) -> str:
    """``points``: ``[{"label", "values": {series: value or None}}]`` oldest first; one line per series.
    ``compact`` (phones): about as wide as a phone, the legend under the plot instead of beside it."""
    if len(points) < 1:
        return ""
    series = list(points[0]["values"])
    colours = ["#2563eb", "#16a34a", "#9333ea", "#ea580c"]
    left, width, top, height = (30, 300, 20, 150) if compact else (50, 600, 20, 180)
    step = width / max(1, len(points) - 1)
    body = [
        f'<line x1="{left}" y1="{top + height}" x2="{left + width}" y2="{top + height}" stroke="#999"/>',
        f'<text x="{left - 6}" y="{top + 4}" font-size="11" text-anchor="end" {_FONT}>1</text>',
        f'<text x="{left - 6}" y="{top + height + 4}" font-size="11" text-anchor="end" {_FONT}>0</text>',
    ]
    for i, point in enumerate(points):
        x = left + i * step if len(points) > 1 else left + width / 2
        # In the compact drawing the margins are narrower than a label: the end labels align inwards.
        anchor = "middle"
        if compact and len(points) > 1 and i in (0, len(points) - 1):
            anchor = "start" if i == 0 else "end"
        body.append(
            f'<text x="{x}" y="{top + height + 18}" font-size="11" text-anchor="{anchor}" {_FONT}>'
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
        legend_x, legend_y = (left, top + height + 40 + 16 * k) if compact else (left + width + 8, top + 14 + 16 * k)
        body.append(f'<text x="{legend_x}" y="{legend_y}" font-size="11" fill="{colour}" {_FONT}>{escape(name)}</text>')
    if compact:
        size = (left + width + 20, top + height + 30 + 16 * len(series) + 6)
    else:
        size = (left + width + 140, top + height + 30)
    return _svg(*size, "버전별 추이", f"{len(points)}개 버전", body, ident)
