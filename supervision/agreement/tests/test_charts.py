"""The report's F1 bars as SVG: every label's name is inside the picture."""

import xml.etree.ElementTree as ET

from supervision.agreement import charts
from supervision.feedback.charts import label_width

SVG = "{http://www.w3.org/2000/svg}"


def test_the_longest_label_name_fits_left_of_the_bars():
    labels = {
        "negative_self_perception": {"f1": 0.4, "support": 3},
        "consent_motivation_check": {"f1": 0.9, "support": 5},
        "empathy": {"f1": 0.7, "support": 8},
    }
    axis_of = {"negative_self_perception": "client_states"}
    for axis in ("client_states", "techniques"):
        picked = {code: f for code, f in labels.items() if axis_of.get(code, "techniques") == axis}
        root = ET.fromstring(charts.f1_bars_svg(picked, axis, ident="f1"))
        names = [t for t in root.iter(f"{SVG}text") if t.get("text-anchor") == "end" and "(" in (t.text or "")]
        names = [t for t in names if not t.text.startswith(("0.", "1."))]
        assert {t.text for t in names} == {charts.label_name(axis, code) for code in picked}
        for text in names:
            # right-aligned at x: it starts label_width to the left of x, which must not be left of 0
            assert float(text.get("x")) - label_width(text.text, 12) >= 0, text.text
