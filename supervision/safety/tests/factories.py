"""Sessions written as a short script, loaded through the real importer (all synthetic).

``script("SF01", "K:suicidal_ideation_admit", "C", "C:risk_assessment")`` is a session of four turns:
a client turn with that state, a counselor turn with an ordinary technique, a counselor turn assessing
risk. A turn is ``K`` (client) or ``C`` (counselor), then ``:`` and its labels joined by ``+``.
"""

from __future__ import annotations

from supervision.models import Session
from supervision.testing import golden_line, import_lines

DEFAULT_TECHNIQUE = "reflection"
DEFAULT_STATE = "affect_contact"


def script_lines(code: str, *turns: str, trainee: str = "trainee_a", held_on: str = "2026-11-02") -> list[dict]:
    lines, counters = [], {"C": 0, "K": 0}
    for seq, turn in enumerate(turns):
        letter, _, labels = turn.partition(":")
        counters[letter] += 1
        codes = [c for c in labels.split("+") if c]
        counselor = letter == "C"
        line = golden_line(
            code,
            seq,
            speaker="counselor" if counselor else "client",
            utterance_id=f"{code}-{letter}-{counters[letter]:03d}",
            techniques=(codes or [DEFAULT_TECHNIQUE]) if counselor else [],
            client_states=[] if counselor else (codes or [DEFAULT_STATE]),
            text=f"합성 발화 {code} {seq}",
            trainee=trainee,
            held_on=held_on,
        )
        lines.append({**line, "session": code})
    return lines


def script(code: str, *turns: str, trainee: str = "trainee_a", held_on: str = "2026-11-02") -> Session:
    import_lines(script_lines(code, *turns, trainee=trainee, held_on=held_on))
    return Session.objects.get(code=code)
