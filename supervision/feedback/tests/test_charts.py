"""The chart functions take plain dicts (CONTRACT §6 snapshots, audit traces) and return accessible SVG."""

import itertools
import xml.etree.ElementTree as ET

from supervision.feedback import charts
from supervision.gauge import figures

SVG = "{http://www.w3.org/2000/svg}"

SNAPSHOT = {
    "trainee": 7,
    "date": "2026-11-30",
    "session": None,
    "turns": 412,
    "counselor_turns": 206,
    "categories": {
        "RELATIONAL": {"count": 80, "share": 0.39, "band": [0.25, 0.45], "status": "within"},
        "EXPLORATORY": {"count": 70, "share": 0.34, "band": [0.2, 0.3], "status": "over"},
        "INTERVENTION": {"count": 20, "share": 0.1, "band": [0.15, 0.3], "status": "under"},
        "STABILIZING": {"count": 25, "share": 0.12, "band": [0.05, 0.2], "status": "within"},
        "STRUCTURING": {"count": 10, "share": 0.05, "band": [0.05, 0.15], "status": "within"},
    },
    "rq_ratio": 1.4,
    "rq_band": "fair",
}


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def test_it_draws_the_gauge_as_well_formed_accessible_svg():
    root = parse(charts.gauge_svg(SNAPSHOT))
    assert root.get("role") == "img"
    assert root.find(f"{SVG}title").text == "기법 군집 비율과 목표 범위, 반영 대 질문 비율"
    desc = root.find(f"{SVG}desc").text
    assert "관계 형성 39% (80회, 목표 25%–45%, 범위 안)" in desc
    assert "탐색 34% (70회, 목표 20%–30%, 과다)" in desc
    assert "반영 대 질문 비율 1.40:1, 적정 (fair ≥ 1:1)" in desc


def test_it_draws_each_share_bar_to_scale_against_its_band():
    root = parse(charts.gauge_svg(SNAPSHOT))
    bars = [r for r in root.iter(f"{SVG}rect") if r.find(f"{SVG}title") is not None]
    assert len(bars) == 5
    widths = [float(b.get("width")) for b in bars]
    assert widths[0] == 128.7  # 0.39 of the 330-unit scale
    assert widths[4] == 16.5


def test_it_places_the_ratio_marker_on_the_miti_scale_and_names_the_band():
    assert figures.rq_band(0.99) == "below_fair"
    assert figures.rq_band(1.0) == "fair"
    assert figures.rq_band(2.0) == "good"
    good = charts.gauge_svg({**SNAPSHOT, "rq_ratio": 2.5})
    assert "우수 (good ≥ 2:1)" in good
    assert "2.50:1" in good


def test_it_survives_missing_and_malformed_values():
    for snapshot in ({}, {"categories": "x", "rq_ratio": "a lot"}, {"categories": {"RELATIONAL": {"share": None}}}):
        root = parse(charts.gauge_svg(snapshot))
        assert "자료 없음" in root.find(f"{SVG}desc").text
    odd = parse(charts.gauge_svg({"categories": {"RELATIONAL": {"share": 7, "band": [0.5, 0.1]}}}))
    assert "관계 형성 100%" in odd.find(f"{SVG}desc").text
    assert "목표 범위 없음" in odd.find(f"{SVG}desc").text


def test_it_escapes_text_that_comes_from_outside():
    svg = charts.trend_svg([{**SNAPSHOT, "date": "<script>alert(1)</script>"}])
    assert "<script>" not in svg
    parse(svg)


def test_it_draws_the_trend_oldest_first_with_one_line_per_category():
    older = {**SNAPSHOT, "date": "2026-10-31", "categories": {"RELATIONAL": {"share": 0.5}}}
    root = parse(charts.trend_svg([SNAPSHOT, older]))
    assert len(list(root.iter(f"{SVG}polyline"))) == 5
    desc = root.find(f"{SVG}desc").text
    assert desc.startswith("2026-10-31부터 2026-11-30까지 2회 측정")
    assert "관계 형성 50%→39%" in desc


def test_it_says_so_when_there_is_no_trend():
    assert "추이 자료가 없습니다." in charts.trend_svg([])


TRACE = [
    {"seq": 3, "utterance_id": "S-K-002", "valence": -0.2, "arousal": 0.5, "risk": 0.3},
    {"seq": 1, "utterance_id": "S-K-001", "valence": 0.1, "arousal": 0.4, "risk": 0.1},
    {"seq": 5, "utterance_id": "S-K-003", "valence": -0.6, "arousal": 0.8, "risk": 0.75},
]


def test_it_plots_the_trajectory_in_seq_order_and_marks_turns_over_the_risk_threshold():
    root = parse(charts.trajectory_svg(TRACE, 0.7))
    desc = root.find(f"{SVG}desc").text
    assert "내담자 발화 3개(순서 1–5)" in desc
    assert "정서가 0.10→-0.60" in desc
    assert "임계값 0.70 이상인 발화 1개: S-K-003" in desc
    big = [c for c in root.iter(f"{SVG}circle") if c.get("r") == "5"]
    assert [c.find(f"{SVG}title").text for c in big] == ["S-K-003: 정서가 -0.60, 각성 0.80, 위험 0.75"]
    assert len(list(root.iter(f"{SVG}polyline"))) == 3


def test_the_trainees_chart_counts_turns_from_one_as_their_page_does():
    root = parse(charts.trajectory_svg(TRACE, 0.7, count_from_one=True))
    assert "내담자 발화 3개(2–6번째 발화)" in root.find(f"{SVG}desc").text
    assert [t.text for t in root.iter(f"{SVG}text") if "번째" in (t.text or "")] == ["2번째 발화", "6번째 발화"]


def test_it_keeps_trajectory_ids_apart_for_several_windows():
    first, second = charts.trajectory_svg(TRACE, 0.5, ident="t-1"), charts.trajectory_svg(TRACE, 0.5, ident="t-2")
    assert 'id="t-1-t"' in first and 'id="t-2-t"' in second


def test_it_skips_unusable_trace_points():
    root = parse(charts.trajectory_svg([{"seq": None}, "x", {"seq": 2, "risk": "high"}], 0.5))
    assert "내담자 발화 1개" in root.find(f"{SVG}desc").text
    assert "궤적 자료가 없습니다." in charts.trajectory_svg([], 0.5)


def test_it_draws_stage_runs_as_wide_as_their_turns():
    stages = ["라포"] * 2 + ["탐색"] * 6 + ["정리"] * 2
    assert charts.stage_segments(stages) == [
        {"stage": "라포", "ko": "라포 형성", "start": 0, "length": 2},
        {"stage": "탐색", "ko": "탐색", "start": 2, "length": 6},
        {"stage": "정리", "ko": "정리", "start": 8, "length": 2},
    ]
    root = parse(charts.stage_strip_svg(stages))
    widths = [r.get("width") for r in root.iter(f"{SVG}rect")]
    assert widths == ["20.00%", "60.00%", "20.00%"]  # of the box: the strip spans the card at any width
    assert root.find(f"{SVG}desc").text == "발화 10개: 라포 형성 2개 → 탐색 6개 → 정리 2개"


def test_stage_names_of_short_runs_do_not_overlap_at_any_width_they_are_shown_at():
    # a two-turn opening among 28 turns is narrower than its name on a phone
    stages = ["라포"] * 2 + ["탐색"] * 12 + ["개입"] * 10 + ["정리"] * 4
    for compact in (False, True):
        root = parse(charts.stage_strip_svg(stages, compact=compact))
        assert root.get("width") == "100%" and root.get("viewBox") is None  # text is never scaled
        font = float(root.find(f"{SVG}g").get("font-size"))
        assert font >= 11
        height = float(root.get("height"))
        narrowest = charts.STRIP_MIN_WIDTH[compact]
        for box in (narrowest, narrowest * 1.5, narrowest * 4):
            texts = [(_left(text, box, font), float(text.get("y")), text.text) for text in root.iter(f"{SVG}text")]
            assert [name for _x, _y, name in texts] == ["라포 형성", "탐색", "개입", "정리"]
            for row in {y for _x, y, _name in texts}:
                on_row = sorted((x, name) for x, y, name in texts if y == row)
                for (x, name), (next_x, _next) in itertools.pairwise(on_row):
                    assert x + charts.label_width(name, font) <= next_x, (compact, box, name)
            assert all(0 <= x and x + charts.label_width(name, font) <= box for x, _y, name in texts)
            assert max(y for _x, y, _name in texts) < height


def _left(text: ET.Element, box: float, font: float) -> float:
    """Where a name placed in percent (``x``, ``dx`` px, ``text-anchor``) starts in a box ``box`` px wide."""
    if text.get("text-anchor") == "end":
        return float(text.get("x").rstrip("%")) / 100 * box - charts.label_width(text.text, font)
    return float(text.get("x").rstrip("%")) / 100 * box + float(text.get("dx") or 0)


def test_a_percentage_keeps_its_particle_on_its_line_and_the_rest_is_escaped():
    from django.template import Context, Template

    rendered = Template("{% load feedback_charts %}{{ text|percent_words_whole|linebreaksbr }}").render(
        Context({"text": "비율이 0%로, 목표 5%–12.5%보다 낮습니다.\n<b>굵게</b> 100 %"})
    )
    assert rendered == (
        '비율이 <span class="nowrap">0%로</span>, 목표 <span class="nowrap">5%</span>–'
        '<span class="nowrap">12.5%보다</span> 낮습니다.<br>&lt;b&gt;굵게&lt;/b&gt; 100 %'
    )
