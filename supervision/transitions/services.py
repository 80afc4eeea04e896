"""The transition table and persona scoring (CONTRACT §10): the command line, the API and the admin pages all
come here. The one write is ``persona_run_create``: it keeps a scored run's figures and counts, never a turn."""

from __future__ import annotations

import getpass
from collections import Counter
from collections.abc import Collection

from django.db import transaction

from supervision.services import ServiceError

from . import counting, selectors
from .models import PersonaRun
from .reading import PersonaFile


def _check_by(by: str) -> None:
    if by not in counting.BY_CHOICES:
        raise ServiceError(f"단위 '{by}'는 category 또는 technique이어야 합니다.")


def transition_table(*, by: str = counting.BY_CATEGORY, user=None, trainees: Collection[str] = ()) -> dict:
    """The ``transition_table`` JSON over the golden sessions ``user`` may see (``None``: all), or the named
    trainees' — with each context's 95 % Wilson intervals under ``intervals``."""
    _check_by(by)
    counts, sessions = selectors.golden_counts(by=by, user=user, trainees=trainees)
    return counting.table_json(counts, by=by, sessions=sessions)


def score_persona(
    persona: PersonaFile, *, rater: str, by: str = counting.BY_CATEGORY, min_support: int = counting.DEFAULT_MIN_SUPPORT
) -> tuple[dict, Counter, Counter]:
    """The ``score_persona`` JSON of a persona file read without errors against every golden session, and
    the two sides' counts behind it."""
    _check_by(by)
    if not persona.ok:
        raise ServiceError("오류가 있는 파일은 채점할 수 없습니다.")
    if min_support < 1:
        raise ServiceError("최소 지지도(min-support)는 1 이상이어야 합니다.")
    golden, _sessions = selectors.golden_counts(by=by)
    ours = persona.counts(by)
    figures = counting.compare(golden, ours, min_support=min_support)
    return {"rater": rater, "by": by, "min_support": min_support, **figures}, golden, ours


@transaction.atomic
def persona_run_create(
    *,
    persona: PersonaFile,
    rater: str,
    by: str = counting.BY_CATEGORY,
    min_support: int = counting.DEFAULT_MIN_SUPPORT,
    file_name: str,
    uploaded_by=None,
    uploaded_from: str = "",
) -> PersonaRun:
    """Scores a persona file and keeps the run (rater, who, when, file name, figures, both sides' counts)."""
    rater = rater.strip()
    if not rater or len(rater) > 100:
        raise ServiceError("페르소나 엔진 이름은 1–100자로 적어 주세요.")
    figures, golden, ours = score_persona(persona, rater=rater, by=by, min_support=min_support)
    run = PersonaRun(
        rater=rater,
        by=by,
        min_support=min_support,
        uploaded_by=uploaded_by,
        uploaded_from="admin" if uploaded_by is not None else uploaded_from or f"command line ({_os_user()})",
        file_name=file_name[:255],
        sessions=len(persona.sessions),
        turns=persona.turns,
        jsd=figures["jsd"],
        coverage=figures["coverage"],
        contexts=figures["contexts"],
        figures=figures,
        golden_counts=counting.counts_to_json(golden),
        persona_counts=counting.counts_to_json(ours),
    )
    run.full_clean()
    run.save()
    return run


def _os_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"
