"""Default target bands (share of all technique labels of a trainee's counselor turns per category).

Why these numbers (starting points for supervisors to tune in the admin, not clinical norms):

- RELATIONAL 0.25–0.45: reflections and empathy carry a person-centred session (MITI counts
  reflections as the core skill) and CONTRACT.md §6 uses this band; above 0.45 a trainee rarely moves
  past rapport, below 0.25 the alliance work is thin.
- EXPLORATORY 0.20–0.40: questions are needed, but MITI's "good" reflection:question ratio of 2:1
  puts question-type labels at about half the reflection-type ones, i.e. around 0.2–0.3 of all labels.
- INTERVENTION 0.05–0.25: intervention is one of four stages; none at all means a session that stays
  supportive while nothing changes (the "stealth sycophancy" pattern of the DESG audit), more than a
  quarter means confronting and interpreting before the client has been heard.
- STABILIZING 0.05–0.20: support and normalisation belong in every session, but above a fifth a
  session tends to be warm and static.
- STRUCTURING 0.03–0.15: confidentiality, psychoeducation and homework frame the start and the end;
  above 0.15 the counselor lectures.

The lows add up to 0.58 and the highs to 1.45, so a balanced session can sit inside every band at once.
Tests import DEFAULT_BANDS from here, so this migration is the one place the defaults are written.
"""

from decimal import Decimal

from django.db import migrations

DEFAULT_BANDS = {
    "RELATIONAL": (Decimal("0.250"), Decimal("0.450")),
    "EXPLORATORY": (Decimal("0.200"), Decimal("0.400")),
    "INTERVENTION": (Decimal("0.050"), Decimal("0.250")),
    "STABILIZING": (Decimal("0.050"), Decimal("0.200")),
    "STRUCTURING": (Decimal("0.030"), Decimal("0.150")),
}
RATIONALE = {
    "RELATIONAL": "반영·공감 중심의 관계 작업(MITI 핵심 기술). 0.45 초과면 라포 단계를 벗어나지 못함.",
    "EXPLORATORY": "질문은 필요하지만 MITI '좋음'(반영:질문 ≥ 2:1)이면 질문류는 반영류의 절반 정도.",
    "INTERVENTION": "네 단계 중 하나. 없으면 지지만 하고 변화가 없음, 0.25 초과면 충분히 듣기 전에 직면·해석.",
    "STABILIZING": "지지·정상화는 매 회기 필요하지만 0.20 초과면 따뜻하지만 정체된 회기가 되기 쉬움.",
    "STRUCTURING": "비밀보장·심리교육·과제로 시작과 끝을 구조화. 0.15 초과면 강의가 됨.",
}


def seed(apps, schema_editor):
    TargetBand = apps.get_model("gauge", "TargetBand")
    for category, (low, high) in DEFAULT_BANDS.items():
        TargetBand.objects.get_or_create(
            category=category, defaults={"low": low, "high": high, "rationale": RATIONALE[category]}
        )


class Migration(migrations.Migration):
    dependencies = [("gauge", "0001_initial")]

    operations = [migrations.RunPython(seed, migrations.RunPython.noop)]
