"""Charts as inline SVG, drawn on the server from plain dicts (no JavaScript, no CDN).

Inputs are the shapes other parts of the portal publish: a review-gauge snapshot (CONTRACT §6), a list
of snapshots for the trend, a trajectory-audit state trace ``[{"seq","utterance_id","valence","arousal",
"risk"}]`` and the stage of each turn. Every function is pure, tolerates missing or malformed values (a
chart never breaks a page) and returns markup with ``role="img"``, ``<title>`` and ``<desc>`` so screen
readers get the figures in words; the pages add a data table next to each picture as well.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from html import escape

from supervision import presentation
from supervision.gauge import figures
from taxonomy import catalogue

RQ_SCALE_MAX = 3.0  # the right end of the reflection-to-question scale

_FONT = 'font-family="system-ui, Noto Sans KR, NanumGothic, sans-serif"'


def wide_and_compact(wide: str, compact: str) -> str:
    """Both drawings; the stylesheets show the compact one on phones, where the wide one would scale its
    text below 11 px (SVG text shrinks with its viewBox). Both are escaped markup from this module's kind of
    chart functions."""
    return f'<div class="chart-wide">{wide}</div><div class="chart-compact">{compact}</div>'


def _num(value: object, default: float | None = 0.0) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    if value != value:  # NaN
        return default
    return float(value)


def _clamp(value: float, low: float, high: float) -> float:
    return max(low, min(high, value))


def _svg(
    width: int, height: int, title: str, desc: str, body: Iterable[str], ident: str, *, natural: bool = False
) -> str:
    """``natural``: drawn at its own width (the stylesheet still shrinks it to fit: ``.chart { max-width:
    100% }``) rather than stretched to the width of its box."""
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width if natural else "100%"}" '
        f'preserveAspectRatio="xMinYMin meet" role="img" aria-labelledby="{ident}-t {ident}-d" class="chart">'
        f'<title id="{ident}-t">{escape(title)}</title><desc id="{ident}-d">{escape(desc)}</desc>'
        + "".join(body)
        + "</svg>"
    )


def _band(value: object) -> tuple[float, float] | None:
    if isinstance(value, Sequence) and not isinstance(value, str) and len(value) == 2:
        low, high = _num(value[0], None), _num(value[1], None)
        if low is not None and high is not None and low <= high:
            return _clamp(low, 0, 1), _clamp(high, 0, 1)
    return None


def category_rows(snapshot: Mapping) -> list[dict]:
    """The five categories in catalogue order with share, band and status (for the chart and its table)."""
    categories = snapshot.get("categories") if isinstance(snapshot, Mapping) else None
    categories = categories if isinstance(categories, Mapping) else {}
    rows = []
    for category in catalogue.CATEGORIES:
        item = categories.get(category.code)
        item = item if isinstance(item, Mapping) else {}
        status = item.get("status") if item.get("status") in presentation.STATUS_KO else ""
        rows.append(
            {
                "code": category.code,
                "ko": category.ko,
                "count": int(_num(item.get("count"), 0)),
                "share": _clamp(_num(item.get("share"), 0.0), 0.0, 1.0),
                "band": _band(item.get("band")),
                "status": status,
                "status_ko": presentation.STATUS_KO.get(status, "—"),
            }
        )
    return rows


def gauge_svg(snapshot: Mapping, *, ident: str = "gauge", compact: bool = False) -> str:
    """Category shares against their target bands, and the reflection-to-question ratio on the MITI scale.

    ``compact``: a narrow drawing for phones (see ``COMPACT_NOTE``)."""
    rows = category_rows(snapshot)
    ratio = _num(snapshot.get("rq_ratio"), None) if isinstance(snapshot, Mapping) else None
    if ratio is not None and ratio < 0:
        ratio = None
    left, bar_w, row_h, top = (82, 180, 34, 16) if compact else (150, 330, 34, 16)
    width = left + bar_w + (96 if compact else 150)
    rq_top = top + row_h * len(rows) + 28
    height = rq_top + 70
    body = [f'<g {_FONT} font-size="{14 if compact else 13}">']
    for x in (0.0, 0.25, 0.5, 0.75, 1.0):
        gx = left + x * bar_w
        body.append(f'<line x1="{gx:.1f}" y1="{top - 6}" x2="{gx:.1f}" y2="{rq_top - 30}" stroke="#d9dde5"/>')
        body.append(
            f'<text x="{gx:.1f}" y="{rq_top - 16}" text-anchor="middle" fill="#5a6272">{presentation.percent(x)}</text>'
        )
    for i, row in enumerate(rows):
        y = top + i * row_h
        swatch = presentation.CATEGORY_SWATCH[row["code"]]
        body.append(f'<text x="{left - 10}" y="{y + 16}" text-anchor="end" fill="#1f2430">{escape(row["ko"])}</text>')
        if row["band"]:
            low, high = row["band"]
            body.append(
                f'<rect x="{left + low * bar_w:.1f}" y="{y}" width="{max((high - low) * bar_w, 1):.1f}" height="22" '
                f'fill="{swatch.background}" stroke="{swatch.stroke}" stroke-dasharray="4 3"/>'
            )
        body.append(
            f'<rect x="{left}" y="{y + 6}" width="{row["share"] * bar_w:.1f}" height="10" fill="{swatch.stroke}">'
            f"<title>{escape(_category_sentence(row))}</title></rect>"
        )
        mark = {"over": "▲ 과다", "under": "▼ 과소", "within": "범위 안"}.get(row["status"], "")
        body.append(
            f'<text x="{left + bar_w + 10}" y="{y + 16}" fill="{swatch.text}">{presentation.percent(row["share"])} {escape(mark)}</text>'
        )
    body.append(_rq_scale(ratio, left, bar_w, rq_top, zone_font=13 if compact else 11))
    body.append("</g>")
    desc = " ".join(_category_sentence(r) for r in rows) + " " + _rq_sentence(ratio)
    return _svg(width, height, "기법 군집 비율과 목표 범위, 반영 대 질문 비율", desc, body, ident)


def _category_sentence(row: dict) -> str:
    band = (
        f"목표 {presentation.percent(row['band'][0])}–{presentation.percent(row['band'][1])}"
        if row["band"]
        else "목표 범위 없음"
    )
    return f"{row['ko']} {presentation.percent(row['share'])} ({row['count']}회, {band}, {row['status_ko']})."


def _rq_sentence(ratio: float | None) -> str:
    if ratio is None:
        return "반영 대 질문 비율: 자료 없음."
    return f"반영 대 질문 비율 {ratio:.2f}:1, {figures.RQ_BAND_KO[figures.rq_band(ratio)]}."


def _rq_scale(ratio: float | None, left: int, bar_w: int, top: int, zone_font: int = 11) -> str:
    def x(value: float) -> float:
        return left + _clamp(value, 0, RQ_SCALE_MAX) / RQ_SCALE_MAX * bar_w

    zones = (
        (0.0, figures.MITI_FAIR, "#fde2e1", figures.RQ_BAND_SHORT_KO[figures.BELOW_FAIR]),
        (figures.MITI_FAIR, figures.MITI_GOOD, "#fff3c9", figures.RQ_BAND_SHORT_KO[figures.FAIR]),
        (figures.MITI_GOOD, RQ_SCALE_MAX, "#dff5ea", figures.RQ_BAND_SHORT_KO[figures.GOOD]),
    )
    parts = [f'<text x="{left - 10}" y="{top + 16}" text-anchor="end" fill="#1f2430">반영:질문</text>']
    for low, high, fill, _name in zones:
        parts.append(f'<rect x="{x(low):.1f}" y="{top}" width="{x(high) - x(low):.1f}" height="22" fill="{fill}"/>')
    mx = x(ratio) if ratio is not None else None
    if mx is not None:  # under the zones' names: the marker crossed 「기준 미달」 when it stood on it
        parts.append(
            f'<line x1="{mx:.1f}" y1="{top}" x2="{mx:.1f}" y2="{top + 22}" stroke="#1f2430" stroke-width="2"/>'
        )
    for low, high, fill, name in zones:
        # a halo of the zone's own colour keeps the name legible where the marker passes behind it
        parts.append(
            f'<text x="{(x(low) + x(high)) / 2:.1f}" y="{top + 15}" text-anchor="middle" fill="#2f3645" '
            f'font-size="{zone_font}" stroke="{fill}" stroke-width="4" paint-order="stroke">{name}</text>'
        )
    for tick in (0.0, figures.MITI_FAIR, figures.MITI_GOOD, RQ_SCALE_MAX):
        label = f"{tick:g}:1" + ("+" if tick == RQ_SCALE_MAX else "")
        parts.append(f'<text x="{x(tick):.1f}" y="{top + 38}" text-anchor="middle" fill="#5a6272">{label}</text>')
    if mx is None:
        parts.append(f'<text x="{left + bar_w + 10}" y="{top + 16}" fill="#5a6272">자료 없음</text>')
    else:
        parts.append(
            f'<path d="M{mx:.1f},{top - 2} l-6,-9 h12 z" fill="#1f2430"><title>{escape(_rq_sentence(ratio))}</title></path>'
            f'<text x="{left + bar_w + 10}" y="{top + 16}" fill="#1f2430">{ratio:.2f}:1</text>'
        )
    return "".join(parts)


def trend_svg(snapshots: Sequence[Mapping], *, compact: bool = False) -> str:
    """Category shares over time, one line per category (snapshots in any order; drawn oldest first)."""
    dated = sorted(
        (s for s in snapshots if isinstance(s, Mapping) and isinstance(s.get("date"), str)), key=lambda s: s["date"]
    )
    left, top, plot_w, plot_h = (44, 14, 270, 160) if compact else (44, 14, 440, 160)
    # Compact: the legend goes under the plot, three names a row, so the drawing stays narrow.
    width = left + plot_w + (26 if compact else 150)
    height = top + plot_h + (40 + 2 * 22 if compact else 40)
    body = [f'<g {_FONT} font-size="{14 if compact else 12}">']
    for y_value in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = top + plot_h - y_value * plot_h
        body.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" stroke="#d9dde5"/>')
        body.append(
            f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" fill="#5a6272">{presentation.percent(y_value)}</text>'
        )
    if not dated:
        body.append(
            f'<text x="{left + 10}" y="{top + plot_h / 2:.1f}" fill="#5a6272">추이를 그릴 자료가 없습니다.</text>'
        )
        body.append("</g>")
        return _svg(
            width, height, "기법 군집 비율 추이", "추이 자료가 없습니다.", body, "trend-c" if compact else "trend"
        )

    def x(i: int) -> float:
        return left + (plot_w / 2 if len(dated) == 1 else i * plot_w / (len(dated) - 1))

    series = [category_rows(s) for s in dated]
    sentences = []
    for c_index, category in enumerate(catalogue.CATEGORIES):
        swatch = presentation.CATEGORY_SWATCH[category.code]
        points = [(x(i), top + plot_h - rows[c_index]["share"] * plot_h) for i, rows in enumerate(series)]
        body.append(
            f'<polyline fill="none" stroke="{swatch.stroke}" stroke-width="2" points="'
            + " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
            + '"/>'
        )
        for (px, py), snap, rows in zip(points, dated, series, strict=True):
            share = rows[c_index]["share"]
            body.append(
                f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3.5" fill="{swatch.stroke}">'
                f"<title>{escape(snap['date'])} {escape(category.ko)} {presentation.percent(share)}</title></circle>"
            )
        if compact:
            lx, ly = left + (c_index % 3) * 95 - 30, top + plot_h + 54 + (c_index // 3) * 22
        else:
            lx, ly = left + plot_w + 14, top + 12 + c_index * 18
        body.append(f'<rect x="{lx}" y="{ly - 9}" width="12" height="4" fill="{swatch.stroke}"/>')
        body.append(f'<text x="{lx + 18}" y="{ly - 3}" fill="#1f2430">{escape(category.ko)}</text>')
        first, last = series[0][c_index]["share"], series[-1][c_index]["share"]
        sentences.append(f"{category.ko} {presentation.percent(first)}→{presentation.percent(last)}")
    # Each distinct date once: one snapshot (or several of the same day) gets one label under its point.
    if dated[0]["date"] == dated[-1]["date"]:
        body.append(
            f'<text x="{x(0):.1f}" y="{top + plot_h + 24}" text-anchor="middle" fill="#5a6272">'
            f"{escape(dated[0]['date'])}</text>"
        )
    else:
        body.append(
            f'<text x="{left}" y="{top + plot_h + 24}" fill="#5a6272">{escape(dated[0]["date"])}</text>'
            f'<text x="{left + plot_w}" y="{top + plot_h + 24}" text-anchor="end" fill="#5a6272">'
            f"{escape(dated[-1]['date'])}</text>"
        )
    body.append("</g>")
    desc = f"{dated[0]['date']}부터 {dated[-1]['date']}까지 {len(dated)}회 측정: " + ", ".join(sentences) + "."
    return _svg(width, height, "기법 군집 비율 추이", desc, body, "trend-c" if compact else "trend")


def trace_points(trace: Iterable[Mapping]) -> list[dict]:
    """The usable points of a state trace, in seq order."""
    points = []
    for item in trace or ():
        if not isinstance(item, Mapping) or _num(item.get("seq"), None) is None:
            continue
        points.append(
            {
                "seq": int(item["seq"]),
                "utterance_id": str(item.get("utterance_id") or ""),
                "valence": _clamp(_num(item.get("valence"), 0.0), -1.0, 1.0),
                "arousal": _clamp(_num(item.get("arousal"), 0.0), 0.0, 1.0),
                "risk": _clamp(_num(item.get("risk"), 0.0), 0.0, 1.0),
            }
        )
    return sorted(points, key=lambda p: p["seq"])


_TRACE_SERIES = (
    ("valence", "정서가", "#3057b9", ""),
    ("arousal", "각성", "#1f8a53", "6 4"),
    ("risk", "위험", "#c62828", ""),
)


def trajectory_svg(
    trace: Iterable[Mapping],
    risk_threshold: float,
    *,
    ident: str = "trajectory",
    marked: Sequence[Mapping] = (),
    compact: bool = False,
    count_from_one: bool = False,
) -> str:
    """Valence (−1..1), arousal and risk (0..1) per client turn, with the risk threshold as a dashed line.

    ``marked``: spans ``{"first_seq", "last_seq", "title"}`` shaded behind the lines (the windows of a
    session worth a second look), so one chart carries what several window charts did.
    ``count_from_one``: turns named as the trainee's page counts them ("2번째 발화"), not by their stored
    seq ("순서 1"), which the supervisor's transcript shows as "#1"."""

    def turn_name(seq: int) -> str:
        return f"{seq + 1}번째 발화" if count_from_one else f"순서 {seq}"

    points = trace_points(trace)
    threshold = _clamp(_num(risk_threshold, 0.0), 0.0, 1.0)
    left, top, plot_w, plot_h = (40, 14, 270, 180) if compact else (44, 14, 480, 180)
    # Compact: the legend goes under the plot in one row, so the drawing stays narrow.
    width = left + plot_w + (78 if compact else 140)
    height = top + plot_h + (40 + 24 if compact else 40)

    def y(value: float) -> float:  # −1 at the bottom, +1 at the top
        return top + (1 - (value + 1) / 2) * plot_h

    body = [f'<g {_FONT} font-size="{14 if compact else 12}">']
    for v in (-1.0, -0.5, 0.0, 0.5, 1.0):
        body.append(f'<line x1="{left}" y1="{y(v):.1f}" x2="{left + plot_w}" y2="{y(v):.1f}" stroke="#d9dde5"/>')
        body.append(f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end" fill="#5a6272">{v:g}</text>')
    body.append(
        f'<line x1="{left}" y1="{y(threshold):.1f}" x2="{left + plot_w}" y2="{y(threshold):.1f}" stroke="#8c1512" '
        f'stroke-dasharray="5 4"><title>위험 임계값 {threshold:.2f}</title></line>'
        f'<text x="{left + plot_w + 8}" y="{y(threshold) + 4:.1f}" fill="#8c1512">임계 {threshold:.2f}</text>'
    )
    if not points:
        body.append(f'<text x="{left + 10}" y="{top + 30}" fill="#5a6272">내담자 상태 궤적 자료가 없습니다.</text>')
        body.append("</g>")
        return _svg(width, height, "내담자 상태 궤적", "궤적 자료가 없습니다.", body, ident)
    first, last = points[0]["seq"], points[-1]["seq"]

    def x(seq: int) -> float:
        return left + (plot_w / 2 if first == last else (seq - first) / (last - first) * plot_w)

    for span in marked or ():
        start = _num(span.get("first_seq"), None) if isinstance(span, Mapping) else None
        end = _num(span.get("last_seq"), None) if isinstance(span, Mapping) else None
        if start is None or end is None:
            continue
        x0, x1 = x(int(_clamp(start, first, last))), x(int(_clamp(end, first, last)))
        body.append(
            f'<rect x="{x0:.1f}" y="{top}" width="{max(x1 - x0, 2):.1f}" height="{plot_h}" fill="#fde2e1" '
            f'opacity="0.6"><title>{escape(str(span.get("title") or ""))}</title></rect>'
        )
    for s_index, (key, name, colour, dash) in enumerate(_TRACE_SERIES):
        coords = " ".join(f"{x(p['seq']):.1f},{y(p[key]):.1f}" for p in points)
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        body.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2"{dash_attr} points="{coords}"/>')
        if compact:
            lx, ly = left + s_index * 90, top + plot_h + 56
        else:  # lower right: the threshold label (risk ≥ 0) sits above it
            lx, ly = left + plot_w + 8, top + plot_h - 50 + s_index * 18
        body.append(
            f'<line x1="{lx}" y1="{ly}" x2="{lx + 16}" y2="{ly}" stroke="{colour}" '
            f'stroke-width="2"{dash_attr}/><text x="{lx + 20}" y="{ly + 4}" fill="#1f2430">{name}</text>'
        )
    above = [p for p in points if p["risk"] >= threshold]
    for p in points:
        hot = p["risk"] >= threshold
        body.append(
            f'<circle cx="{x(p["seq"]):.1f}" cy="{y(p["risk"]):.1f}" r="{5 if hot else 3}" '
            f'fill="{"#8c1512" if hot else "#c62828"}"><title>{escape(_point_sentence(p))}</title></circle>'
        )
    body.append(
        f'<text x="{left}" y="{top + plot_h + 24}" fill="#5a6272">{turn_name(first)}</text>'
        f'<text x="{left + plot_w}" y="{top + plot_h + 24}" text-anchor="end" fill="#5a6272">{turn_name(last)}</text>'
    )
    body.append("</g>")
    span = f"{first + 1}–{last + 1}번째 발화" if count_from_one else f"순서 {first}–{last}"
    desc = (
        f"내담자 발화 {len(points)}개({span}). 정서가 {points[0]['valence']:.2f}→{points[-1]['valence']:.2f}, "
        f"위험 {points[0]['risk']:.2f}→{points[-1]['risk']:.2f}; 위험이 임계값 {threshold:.2f} 이상인 발화 {len(above)}개"
        + (": " + ", ".join(p["utterance_id"] or str(p["seq"]) for p in above[:10]) if above else "")
        + "."
    )
    return _svg(width, height, "내담자 상태 궤적", desc, body, ident)


def _point_sentence(p: dict) -> str:
    return f"{p['utterance_id'] or p['seq']}: 정서가 {p['valence']:.2f}, 각성 {p['arousal']:.2f}, 위험 {p['risk']:.2f}"


def stage_segments(stages: Iterable[str]) -> list[dict]:
    """Runs of consecutive turns in the same stage: ``[{"stage", "ko", "start", "length"}]``."""
    segments: list[dict] = []
    for index, stage in enumerate(stages):
        if segments and segments[-1]["stage"] == stage:
            segments[-1]["length"] += 1
        else:
            segments.append(
                {"stage": stage, "ko": presentation.STAGE_KO.get(stage, stage), "start": index, "length": 1}
            )
    return segments


# The narrowest box each drawing of the stage strip is shown in: a tablet or laptop card at 601 px and up (the
# card's inside, 601 − 2 × 16 px margins − 2 × 16 px padding), a phone's at 320 px and up. Names are placed so
# that they do not collide at that width; a wider box only spreads them further apart.
STRIP_MIN_WIDTH = {False: 535, True: 288}
STRIP_FONT = 13


def stage_strip_svg(stages: Iterable[str], *, compact: bool = False) -> str:
    """The session as one strip, coloured by stage, each run as wide as its number of turns: drawn in the box's
    own pixels (no viewBox) so that the strip spans the card at any width while its names stay 13 px — runs are
    placed in percent, names at their run's start (``dx`` 4 px), the last ones right-aligned to the end."""
    segments = stage_segments(stages)
    total = sum(s["length"] for s in segments)
    width, bar_h, font = STRIP_MIN_WIDTH[compact], 24, STRIP_FONT
    ident = "stages-c" if compact else "stages"
    if not total:
        body = [f'<g {_FONT} font-size="{font}">', '<text x="0" y="18" fill="#5a6272">발화가 없습니다.</text></g>']
        return _fluid_svg(48, "회기 단계 흐름", "발화가 없습니다.", body, ident)
    bars, labels = [], []
    # Where the next name may start on each of two rows (at the narrowest width): a short run's name goes below
    # the previous one rather than over it ("라포 형성" under a two-turn run ran into "탐색" on a phone).
    free = [0.0, 0.0]
    for seg in segments:
        start, share = seg["start"] / total, seg["length"] / total
        colour = presentation.STAGE_COLOUR.get(seg["stage"], "#b0b6c2")
        sentence = f"{seg['ko']}: 발화 {seg['start'] + 1}–{seg['start'] + seg['length']} ({seg['length']}개)"
        bars.append(
            f'<rect x="{start * 100:.2f}%" y="0" width="{share * 100:.2f}%" height="{bar_h}" fill="{colour}" '
            f'stroke="#fff"><title>{escape(sentence)}</title></rect>'
        )
        text_w = label_width(seg["ko"], font)
        at_end = start * width + 4 + text_w > width
        x = width - text_w if at_end else start * width + 4
        row = next((r for r, edge in enumerate(free) if x >= edge), None)
        if row is None:
            continue  # no room on either row: the run keeps its name in its tooltip and in the description
        free[row] = x + text_w + 6
        y = bar_h + 16 + row * (font + 4)
        place = 'x="100%" text-anchor="end"' if at_end else f'x="{start * 100:.2f}%" dx="4"'
        labels.append(f'<text {place} y="{y}" fill="#1f2430">{escape(seg["ko"])}</text>')
    height = 48 + (font + 4 if free[1] else 0)
    body = [f'<g {_FONT} font-size="{font}">', *bars, *labels, "</g>"]
    desc = " → ".join(f"{s['ko']} {s['length']}개" for s in segments)
    return _fluid_svg(height, "회기 단계 흐름", f"발화 {total}개: {desc}", body, ident)


def _fluid_svg(height: int, title: str, desc: str, body: Iterable[str], ident: str) -> str:
    """As ``_svg``, but as wide as its box and in the box's own pixels: nothing in it scales."""
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="100%" height="{height}" role="img" '
        f'aria-labelledby="{ident}-t {ident}-d" class="chart fluid">'
        f'<title id="{ident}-t">{escape(title)}</title><desc id="{ident}-d">{escape(desc)}</desc>'
        + "".join(body)
        + "</svg>"
    )


def label_width(text: str, font_size: float) -> float:
    """About how wide ``text`` is drawn: Hangul and other wide characters a full em, the rest about half."""
    wide = sum(1 for ch in text if unicodedata.east_asian_width(ch) in "WF")
    return (wide + 0.55 * (len(text) - wide)) * font_size


def technique_rows(techniques: Mapping) -> list[dict]:
    """Techniques that occur, most frequent first: ``[{"code", "ko", "category", "count", "share"}]``."""
    counts = {code: int(_num(n, 0)) for code, n in (techniques if isinstance(techniques, Mapping) else {}).items()}
    total = sum(n for n in counts.values() if n > 0)
    rows = [
        {
            "code": code,
            "ko": presentation.TECHNIQUE_KO.get(code, code),
            "category": presentation.CATEGORY_KO.get(presentation.TECHNIQUE_CATEGORY.get(code, ""), "—"),
            "count": n,
            "share": n / total if total else 0.0,
        }
        for code, n in counts.items()
        if n > 0
    ]
    return sorted(rows, key=lambda row: (-row["count"], row["code"]))


def severity_rows(critiques: Mapping) -> list[dict]:
    """Critique counts in catalogue order of severity: ``[{"code", "ko", "count"}]``."""
    critiques = critiques if isinstance(critiques, Mapping) else {}
    return [
        {"code": code, "ko": presentation.SEVERITY_KO[code], "count": int(_num(critiques.get(code), 0))}
        for code in catalogue.CRITIQUE_SEVERITIES
    ]


def transition_rows(transitions: Mapping) -> list[dict]:
    """Client-state transitions ``{"a>b": n}``, most frequent first, with Korean names."""
    rows = []
    for key, n in (transitions if isinstance(transitions, Mapping) else {}).items():
        before, _, after = str(key).partition(">")
        rows.append(
            {
                "before": before,
                "before_ko": presentation.CLIENT_STATE_KO.get(before, before),
                "after": after,
                "after_ko": presentation.CLIENT_STATE_KO.get(after, after),
                "persists": before == after,
                "count": int(_num(n, 0)),
            }
        )
    return sorted(rows, key=lambda row: (-row["count"], row["before"], row["after"]))


def merged_trace(audits: Iterable[Mapping]) -> list[dict]:
    """The state traces of a session's overlapping windows as one trace: each client turn once, in seq
    order (the first window that holds a turn gives its figures)."""
    seen: dict[int, Mapping] = {}
    for audit in audits or ():
        for point in (audit.get("trace") if isinstance(audit, Mapping) else None) or ():
            seq = _num(point.get("seq"), None) if isinstance(point, Mapping) else None
            if seq is not None and int(seq) not in seen:
                seen[int(seq)] = point
    return [seen[seq] for seq in sorted(seen)]
