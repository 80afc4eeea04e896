"""Writes of a turn's golden labels (techniques, client states, stage, dialog act), each one transaction
with one history row per axis it changed (``LabelChange``).

The admin's label forms and the adjudication of annotation runs both come through here. Who may write is
the caller's check; what may be written is checked here with the shared rules (the attach rule, the
catalogue's codes). Imports write whole files through the importer and are their own record.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from django.db import transaction

from supervision import pagecache, rules
from supervision.models import LabelChange, Turn, TurnClientState, TurnTechnique
from supervision.signals import golden_labels_written
from supervision.trajectory.tasks import queue_session_audits
from taxonomy import catalogue
from taxonomy.models import ClientStateDef, TechniqueLabelDef

_UNSET = object()


class LabelRejected(Exception):
    """The change breaks a rule; ``problems`` maps each axis to its Korean messages."""

    def __init__(self, problems: dict[str, list[str]]) -> None:
        super().__init__(problems)
        self.problems = problems


def _ordered(codes: Iterable[str], catalogue_order: tuple[str, ...]) -> list[str]:
    chosen = set(codes)
    return [code for code in catalogue_order if code in chosen]


def turn_label_codes(turn: Turn) -> dict[str, object]:
    """The turn's golden labels as stored now, in catalogue order."""
    return {
        "techniques": _ordered(
            TurnTechnique.objects.filter(turn=turn).values_list("label__code", flat=True), catalogue.TECHNIQUE_CODES
        ),
        "client_states": _ordered(
            TurnClientState.objects.filter(turn=turn).values_list("label__code", flat=True),
            catalogue.CLIENT_STATE_CODES,
        ),
        "stage": turn.stage_id,
        "dialog_act": turn.dialog_act,
    }


def _problems(turn: Turn, changes: dict[str, object]) -> dict[str, list[str]]:
    problems: dict[str, list[str]] = {}
    for axis, known in (("techniques", catalogue.TECHNIQUE_CODES), ("client_states", catalogue.CLIENT_STATE_CODES)):
        unknown = sorted(set(changes.get(axis) or ()) - set(known))
        if unknown:
            problems.setdefault(axis, []).append(f"분류 체계에 없는 라벨입니다: {', '.join(unknown)}")
    for axis, message in rules.attach_problems(
        turn.speaker, techniques=changes.get("techniques") or (), client_states=changes.get("client_states") or ()
    ):
        problems.setdefault(axis, []).append(message)
    if "stage" in changes and changes["stage"] not in catalogue.STAGE_CODES:
        problems.setdefault("stage", []).append(f"단계 '{changes['stage']}'는 라포/탐색/개입/정리 중 하나여야 합니다.")
    act = changes.get("dialog_act")
    if act is not None and act not in catalogue.DIALOG_ACT_CODES:
        problems.setdefault("dialog_act", []).append(f"대화행위 '{act}'를 알 수 없습니다.")
    return problems


@transaction.atomic
def turn_labels_update(
    *,
    turn: Turn,
    changed_by,
    via: str,
    techniques: Iterable[str] | None = None,
    client_states: Iterable[str] | None = None,
    stage: str | None = None,
    dialog_act: object = _UNSET,
    note: str = "",
) -> list[LabelChange]:
    """Sets the given axes (``None`` keeps an axis; ``dialog_act=None`` clears the act) and records what
    changed. Returns the history rows written (none when nothing changed)."""
    turn = Turn.objects.select_for_update().get(pk=turn.pk)
    changes: dict[str, object] = {}
    if techniques is not None:
        changes["techniques"] = _ordered(techniques, catalogue.TECHNIQUE_CODES) + sorted(
            set(techniques) - set(catalogue.TECHNIQUE_CODES)
        )
    if client_states is not None:
        changes["client_states"] = _ordered(client_states, catalogue.CLIENT_STATE_CODES) + sorted(
            set(client_states) - set(catalogue.CLIENT_STATE_CODES)
        )
    if stage is not None:
        changes["stage"] = stage
    if dialog_act is not _UNSET:
        # The silence correction holds here as in the importer: words tagged silence are "null".
        changes["dialog_act"], _warning = rules.corrected_dialog_act(turn.text, dialog_act or None)
    if problems := _problems(turn, changes):
        raise LabelRejected(problems)

    before = turn_label_codes(turn)
    history = [
        LabelChange(turn=turn, axis=axis, before=before[axis], after=value, changed_by=changed_by, via=via, note=note)
        for axis, value in changes.items()
        if before[axis] != value
    ]
    changed = {row.axis for row in history}
    for axis, link, definitions in (
        ("techniques", TurnTechnique, TechniqueLabelDef),
        ("client_states", TurnClientState, ClientStateDef),
    ):
        if axis not in changed:
            continue
        wanted, had = set(changes[axis]), set(before[axis])
        link.objects.filter(turn=turn, label__code__in=had - wanted).delete()
        ids = definitions.objects.filter(code__in=wanted - had).values_list("id", flat=True)
        link.objects.bulk_create([link(turn=turn, label_id=label_id) for label_id in ids])
    fields = [axis for axis in ("stage", "dialog_act") if axis in changed]
    if fields:
        turn.stage_id = changes.get("stage", turn.stage_id)
        turn.dialog_act = changes.get("dialog_act", turn.dialog_act)
        turn.save(update_fields=fields)
    LabelChange.objects.bulk_create(history)
    if history:
        pagecache.sessions_changed([turn.session_id])
        # The trajectory explanation reads the labels: re-audit the session once the edit is committed, as an
        # import does (the trainee page says an audit is pending meanwhile).
        transaction.on_commit(partial(queue_session_audits, [turn.session_id]))
        golden_labels_written(turn_labels_update, [turn.session_id])
    return history
