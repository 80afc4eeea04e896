"""Sessions for the page tests, loaded through the real importer (all synthetic)."""

from __future__ import annotations

from supervision.models import Session
from supervision.testing import golden_line, import_lines

CRITIQUE = {
    "kind": "critique",
    "text": "감정 반영 없이 곧바로 질문으로 넘어갔습니다.",
    "dimension": "공감 타이밍",
    "expected": "reflection",
    "actual": "exploration",
    "severity": "moderate",
}


def make_session(
    code: str, turns: int, *, trainee: str, critique_every: int = 4, held_on: str = "2026-11-02"
) -> Session:
    """A session of ``turns`` turns; every ``critique_every``-th counselor turn carries a critique."""
    lines = []
    for seq in range(turns):
        comments = [CRITIQUE] if seq % 2 == 0 and critique_every and seq % critique_every == 0 else []
        stage = ("라포", "탐색", "개입", "정리")[min(3, seq * 4 // max(turns, 1))]
        line = golden_line(
            code,
            seq,
            stage=stage,
            comments=comments,
            trainee=trainee,
            held_on=held_on,
            nonverbal=["(잠시 멈춤)"] if seq % 5 == 1 else [],
            text=f"합성 발화 {code} {seq}번째 문장입니다.",
        )
        lines.append({**line, "session": code})
    import_lines(lines)
    return Session.objects.get(code=code)
