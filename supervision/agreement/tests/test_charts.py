"""The report's heat map names what it counts in Korean, with the code, and leaves room for the names."""

import re

from supervision.agreement.charts import confusion_svg


def test_a_dialog_act_heat_map_names_each_act_in_korean_with_its_code_and_fits_them():
    confusion = {"inform": {"inform": 42, "question": 4}, "question": {"question": 5}, "none": {"none": 3}}
    svg = confusion_svg(confusion, "dialog_act", ident="cm-dialog_act")
    assert "일반 정보 제공 (inform)" in svg and "질문 (question)" in svg and "대화행위 없음 (none)" in svg
    # the row names end at the matrix's left edge, which starts right of the longest of them
    width = float(re.search(r'viewBox="0 0 ([0-9.]+) ', svg).group(1))
    first_cell = min(float(x) for x in re.findall(r'<rect x="([0-9.]+)"', svg))
    assert first_cell > 11 * len("긍정 추론 후보") and width > first_cell + 3 * 44


def test_a_stage_heat_map_keeps_its_korean_names_as_they_are():
    svg = confusion_svg({"라포": {"라포": 3}, "탐색": {"탐색": 2}}, "stage", ident="cm-stage")
    assert ">라포</text>" in svg and ">탐색</text>" in svg
