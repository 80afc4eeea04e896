"""Agreement of a rater with the golden set (CONTRACT §7): scoring, saving a run, adjudicating differences.

Scoring is set-based: the rater's answers and the golden labels of the sessions concerned are read in a
few queries, then ``scoring`` computes every figure at once on arrays.
"""

from __future__ import annotations

import functools
import getpass
import hashlib
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

from django.core.cache import cache
from django.db import IntegrityError, connection, transaction

from portal.perf import without_cyclic_gc
from supervision.labelling import LabelRejected, turn_labels_update
from supervision.models import Turn
from supervision.roles import supervises
from supervision.services import ServiceError
from taxonomy import catalogue

from . import selectors
from .models import AdjudicationDecision, AnnotationRun, Outcome, RaterKind, RunTurn
from .reading import RunFile
from .scoring import AXES, MULTI_LABEL_AXES, NO_ACT, Ratings, agreement, krippendorff_alpha, label_rank

GOLDEN = "golden"
PRESENT, ABSENT = "present", "absent"


def _restricted(ratings: Ratings, turns: Mapping[int, object] | set[int]) -> Ratings:
    """Only the turns in ``turns`` (the ones the viewer may see). An axis whose turns are all in is kept as
    it is, not copied (Ratings are never changed once read): the usual case, a run and the golden set of the
    same sessions with everything in view, where the copies cost 0.2 s for a run of 100,000 turns."""
    keys = turns.keys() if isinstance(turns, Mapping) else turns

    def kept(values: dict) -> dict:
        return values if values.keys() <= keys else {t: v for t, v in values.items() if t in keys}

    return Ratings(**{axis: kept(ratings.axis(axis)) for axis in AXES})


class SharedReads:
    """One page's reads, shared by everything it scores: the golden labels of all the sessions the page needs,
    read once (the report page scored the run, each of the rater's versions and α, each reading the golden
    labels again: 3–5 s first view for a run of 100,000 turns), and each saved run's answers, read once.
    Nothing is read until a figure is not found in the cache. ``need`` every session the page may score first."""

    def __init__(self, user=None) -> None:
        self.user = user
        self._needed: set[int] = set()
        self._golden: tuple[Ratings, selectors.TurnTable] | None = None
        self._runs: dict[int, Ratings] = {}

    def need(self, session_ids: Collection[int]) -> None:
        self._needed |= set(session_ids)

    def golden(self, session_ids: Collection[int]) -> tuple[Ratings, selectors.TurnTable]:
        wanted = set(session_ids)
        if self._golden is None or not wanted <= self._needed:
            self._needed |= wanted
            self._golden = selectors.golden_ratings(self._needed, self.user)
        golden, table = self._golden
        if wanted == self._needed:
            return golden, table
        narrowed = table.of_sessions(wanted)
        return _restricted(golden, narrowed.names), narrowed

    def run(self, run: AnnotationRun) -> Ratings:
        if run.pk not in self._runs:
            self._runs[run.pk] = selectors.run_ratings(run, self.user)
        return self._runs[run.pk]


# _FIGURES_WITHOUT_GC — the reads and figures of a run build hundreds of thousands of small objects (each turn's
# dict entries and tuples, the counted answer pairs); while they do, the cyclic collector is paused
# (``without_cyclic_gc``). Otherwise it walked the whole heap again and again: half the CPU time of the
# golden read of a 100,000-turn run (0.6 → 0.3 s).


def score_ratings(
    ratings: Ratings,
    session_ids: Collection[int],
    *,
    rater: str,
    against: AnnotationRun | None = None,
    user=None,
    turns: selectors.TurnTable | None = None,
    reads: SharedReads | None = None,
) -> dict:
    """The §7 JSON of ``ratings`` against the golden labels, or against a saved run of another rater,
    over the turns both rated that ``user`` may see (``None``: all). ``turns``: the sessions' turns
    when the caller read them already (a run file's reader did); ``reads``: a page's shared reads."""
    with without_cyclic_gc():  # see _FIGURES_WITHOUT_GC
        return _score_ratings(ratings, session_ids, rater=rater, against=against, user=user, turns=turns, reads=reads)


def _score_ratings(ratings, session_ids, *, rater, against, user, turns, reads) -> dict:
    if against is not None:
        extra = selectors.run_session_ids(against) - set(session_ids)
        session_ids, turns = set(session_ids) | extra, turns if not extra else None
    if reads is not None:
        golden, index = reads.golden(session_ids)
    else:
        golden, index = selectors.golden_ratings(session_ids, user, turns=turns)
    against_ratings = None
    if against is not None:
        against_ratings = reads.run(against) if reads is not None else selectors.run_ratings(against, user)
    reference = golden if against is None else _restricted(against_ratings, index.names)
    figures = agreement(reference, _restricted(ratings, index.names), names=index.names, order=index.order)
    return {"rater": rater, "against": GOLDEN if against is None else against.rater, **figures}


# A saved run's figures, and α across the raters' newest runs, are kept in the cache under the state of the
# sessions they were computed over (``_sessions_state``): the report page scored the run, each of the rater's
# versions and α afresh on every view, 4–5 s for a run of 100,000 turns.
_FIGURES_CACHE_SECONDS = 7 * 24 * 3600
_FIGURES_CACHE_FORMAT = 1  # raise it when the figures change shape or meaning


def score_run(
    run: AnnotationRun, *, user=None, against: AnnotationRun | None = None, reads: SharedReads | None = None
) -> dict:
    sessions = selectors.run_session_ids(run)
    runs = [run] if against is None else [run, against]
    key = _figures_key("run", runs, sessions | (selectors.run_session_ids(against) if against else set()), user)
    figures = cache.get(key) if key else None
    if figures is None:
        with without_cyclic_gc():  # see _FIGURES_WITHOUT_GC
            ratings = reads.run(run) if reads is not None else selectors.run_ratings(run, user)
            figures = score_ratings(ratings, sessions, rater=run.rater, against=against, user=user, reads=reads)
        if key:
            cache.set(key, figures, _FIGURES_CACHE_SECONDS)
    return figures


def _figures_key(kind: str, runs: Collection[AnnotationRun], sessions: Collection[int], user) -> str | None:
    """The cache key of figures over ``runs`` and the golden labels of ``sessions`` as ``user`` sees them, or
    None where there are no revision marks (SQLite). Saved runs never change; the golden side is named by
    ``_sessions_state``."""
    if connection.vendor != "postgresql":
        return None
    named = ",".join(run.cache_name for run in runs)
    return f"agreement:figures:{_FIGURES_CACHE_FORMAT}:{kind}:{named}:{_sessions_state(sessions, user)}"


def _sessions_state(session_ids: Collection[int], user) -> str:
    """A digest of which of these sessions ``user`` may see, with their codes and revision marks: it changes
    when a turn or label link of any of them is written (PostgreSQL triggers), a session goes, or the
    user's trainees change."""
    in_view = sorted(selectors.sessions_in_view(session_ids, user).items())
    return hashlib.blake2b(repr(in_view).encode(), digest_size=16).hexdigest()


def score_against_rater(rater: str) -> AnnotationRun:
    """The saved run ``--against RATER`` means: that rater's newest."""
    run = selectors.latest_run(rater)
    if run is None:
        raise ServiceError(f"저장된 평가자 '{rater}'의 주석 실행이 없습니다(먼저 --save로 저장하세요).")
    return run


def alpha_runs(user=None) -> list[AnnotationRun]:
    """The runs α is computed across: each rater's newest."""
    return selectors.latest_runs_per_rater(user)


def alpha_across_sources(
    *, user=None, extra: tuple[str, RunFile] | None = None, reads: SharedReads | None = None
) -> dict:
    """Krippendorff's α per axis across the golden set and the newest run of each rater (plus ``extra``,
    a run being scored but not saved, which then stands in for its rater's saved one)."""
    runs = [run for run in alpha_runs(user) if extra is None or run.rater != extra[0]]
    sessions: set[int] = set(extra[1].session_ids) if extra else set()
    for run in runs:
        sessions |= selectors.run_session_ids(run)
    key = _figures_key("alpha", runs, sessions, user) if extra is None else None  # a file being scored: not kept
    kept = cache.get(key) if key else None
    if kept is not None:
        return kept
    with without_cyclic_gc():  # see _FIGURES_WITHOUT_GC
        alpha = _alpha(runs, sessions, user, extra, reads)
    if key:
        cache.set(key, alpha, _FIGURES_CACHE_SECONDS)
    return alpha


def _alpha(runs: list[AnnotationRun], sessions: set[int], user, extra, reads) -> dict:
    if reads is not None and extra is None:
        golden, index = reads.golden(sessions)
        sources = [golden] + [_restricted(reads.run(run), index.names) for run in runs]
    else:
        golden, index = selectors.golden_ratings(sessions, user, turns=extra[1].turns if extra and not runs else None)
        sources = [golden] + [_restricted(selectors.run_ratings(run, user), index.names) for run in runs]
    names = [GOLDEN] + [run.rater for run in runs]
    if extra is not None:
        sources.append(_restricted(extra[1].ratings, index.names))
        names.append(extra[0])
    return {"sources": names, "axes": {axis: krippendorff_alpha(sources, axis) for axis in AXES}}


@dataclass(frozen=True)
class RunReport:
    """What a run's report page shows, as ``user`` sees it: the run's figures, each version of its rater
    with its figures (oldest first) and Krippendorff's α across the raters' newest runs."""

    figures: dict
    versions: list[tuple[AnnotationRun, dict]]
    alpha: dict


def run_report(run: AnnotationRun, user=None) -> RunReport:
    """The report of ``run`` for ``user`` (``None``: everyone's turns, as staff see them). Each figure comes
    from the cache while the sessions it covers are unchanged; what is not there is worked out with one read
    of the golden labels and of each run's answers (``SharedReads``) and kept."""
    versions = list(selectors.rater_versions(run, user))
    reads = SharedReads(user)
    for scored in {run, *versions, *alpha_runs(user)}:
        reads.need(selectors.run_session_ids(scored))
    figures = score_run(run, user=user, reads=reads)
    scored_versions = [
        (version, figures if version.pk == run.pk else score_run(version, user=user, reads=reads))
        for version in versions
    ]
    return RunReport(figures, scored_versions, alpha_across_sources(user=user, reads=reads))


def _queue_report_keep(run_id: int) -> None:
    from .tasks import queue_run_report_keep  # the task module imports this one

    queue_run_report_keep(run_id)


@transaction.atomic
def annotation_run_create(
    *,
    run_file: RunFile,
    rater: str,
    kind: str = RaterKind.AI,
    note: str = "",
    file_name: str,
    uploaded_by=None,
    uploaded_from: str = "",
) -> AnnotationRun:
    """Keeps a run that read without errors. It writes only its own rows: never a golden label.
    ``uploaded_from`` says where it came from when no user uploaded it (default: the command line's OS user)."""
    if not run_file.ok:
        raise ServiceError("오류가 있는 파일은 저장할 수 없습니다.")
    rater = rater.strip()
    if not rater or len(rater) > 100:
        raise ServiceError("평가자 이름은 1–100자로 적어 주세요.")
    if kind not in RaterKind.values:
        raise ServiceError(f"종류 '{kind}'는 ai 또는 human이어야 합니다.")
    run = AnnotationRun(
        rater=rater,
        kind=kind,
        note=note.strip()[:500],
        uploaded_by=uploaded_by,
        uploaded_from="admin" if uploaded_by is not None else uploaded_from or f"command line ({_os_user()})",
        file_name=file_name[:255],
    )
    run.full_clean()
    run.save()
    rows = [
        RunTurn(
            run=run,
            turn_id=turn_id,
            techniques=sorted(line.techniques) if line.techniques is not None else None,
            client_states=sorted(line.client_states) if line.client_states is not None else None,
            stage_id=line.stage,
            dialog_act_rated=line.dialog_act_rated,
            dialog_act=line.dialog_act,
        )
        for turn_id, line in run_file.lines
    ]
    RunTurn.objects.bulk_create(rows, batch_size=5000 if connection.vendor == "postgresql" else 500)
    transaction.on_commit(partial(_queue_report_keep, run.pk))  # see keeping.py
    return run


def _os_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


# Adjudication ------------------------------------------------------------------------------------------


class Difference(NamedTuple):
    """One place where the rater and the golden set differ. On a multi-label axis ``label`` is present on
    one side only (``golden``/``rater`` say ``present``/``absent``); on a single-valued axis ``label`` is
    the rater's class and ``golden`` the golden one. A tuple: the queue keeps tens of thousands in the cache."""

    turn_id: int
    utterance_id: str
    order: tuple[str, int]
    axis: str
    label: str
    golden: str
    rater: str


def _differences(run_ratings: Ratings, golden: Ratings, index: selectors.TurnIndex) -> list[Difference]:
    found = []
    for axis in AXES:
        theirs, ours = run_ratings.axis(axis), golden.axis(axis)
        for turn in theirs.keys() & ours.keys():
            name, order = index.names[turn], index.order[turn]
            if axis in MULTI_LABEL_AXES:
                for label in theirs[turn] - ours[turn]:
                    found.append(Difference(turn, name, order, axis, label, ABSENT, PRESENT))
                for label in ours[turn] - theirs[turn]:
                    found.append(Difference(turn, name, order, axis, label, PRESENT, ABSENT))
            elif theirs[turn] != ours[turn]:
                found.append(Difference(turn, name, order, axis, theirs[turn], ours[turn], theirs[turn]))
    return found


# The queue's differences are kept in the cache per session of the run, with the session's code and revision
# mark (``selectors.sessions_in_view``). A page works out again only the sessions written since — an accepted
# difference changes one — instead of the whole run: 2.5 s a page for a run of 100,000 turns with 63,691
# differences (make bench-agreement), most of it reading the golden labels again.
_QUEUE_CACHE_SECONDS = 7 * 24 * 3600
_QUEUE_CACHE_FORMAT = 2  # raise it when what is kept changes shape (Difference's fields, the entry's layout)


def run_differences(run: AnnotationRun, user=None) -> list[Difference]:
    """The adjudication queue: the differences on turns the user may see that nobody has decided yet,
    grouped by axis and label, each group in transcript order. Suicide and self-harm states come first: a
    disclosure the rater missed, or saw where there was none, is the difference that matters most."""
    # Tens of thousands of small tuples: without the pause, the collections they set off walked the whole
    # heap and took 0.2 of the 0.23 s that unpickling and building them cost (a run of 63,691 differences).
    with without_cyclic_gc():
        by_session = _differences_by_session(run, user)
        decided = selectors.decided_keys(run)
        open_items = [d for found in by_session.values() for d in found if (d.turn_id, d.axis, d.label) not in decided]
        return sorted(open_items, key=lambda d: (_queue_group_order(d.axis, d.label), d.order))


@functools.cache
def _queue_group_order(axis: str, label: str) -> tuple:
    return (not is_safety_critical(axis, label), AXES.index(axis), label_rank(axis, label), label)


def _differences_by_session(run: AnnotationRun, user) -> dict[int, list[Difference]]:
    """Every difference on the run's sessions the user may see, by session: from the cache where the
    session's code and revision mark are those it was worked out for, from the database otherwise.

    The run's own answers never change; the golden side, the utterance ids and the order do only through
    writes that give the session a new mark (or a new code). A rolled-back write's mark is never seen
    again, so an entry made from it is never used. Without marks (SQLite) nothing is kept."""
    marked = connection.vendor == "postgresql"
    key = f"agreement:queue:{_QUEUE_CACHE_FORMAT}:{run.cache_name}"
    found = (cache.get(key) if marked else None) or {}
    run_sessions = selectors.run_session_ids(run)
    in_view = selectors.sessions_in_view(run_sessions, user)
    stale = sorted(sid for sid, mark in in_view.items() if found.get(sid, (None,))[0] != mark)
    if stale:
        whole_run = len(stale) == len(run_sessions)
        golden, index = selectors.golden_ratings(stale)
        answers = _restricted(selectors.run_ratings(run, session_ids=None if whole_run else stale), index.names)
        fresh: dict[int, list[tuple]] = {sid: [] for sid in stale}
        for d in _differences(answers, golden, index):
            fresh[index.sessions[d.turn_id]].append(tuple(d))
        for sid in stale:
            found[sid] = (in_view[sid], fresh[sid])
        if marked:
            cache.set(key, found, _QUEUE_CACHE_SECONDS)
    return {sid: [Difference._make(d) for d in found[sid][1]] for sid in in_view}


def is_safety_critical(axis: str, label: str) -> bool:
    return axis == "client_states" and label in catalogue.SAFETY_CRITICAL_STATES


class AdjudicationRejected(ServiceError):
    pass


@transaction.atomic
def adjudication_decide(
    *, run: AnnotationRun, turn: Turn, axis: str, label: str, outcome: str, decided_by, note: str = ""
) -> AdjudicationDecision:
    """Records a supervisor's decision on one difference, once. ``accepted`` puts the rater's answer into
    the golden set through the label service (with its history); ``kept`` leaves the golden label."""
    if not supervises(decided_by, turn.session.trainee_id):
        raise AdjudicationRejected("담당 수련생의 발화만 판정할 수 있습니다.")
    if outcome not in Outcome.values:
        raise AdjudicationRejected(f"결정 '{outcome}'는 accepted 또는 kept여야 합니다.")
    golden, index = selectors.golden_ratings({turn.session_id})
    ratings = selectors.run_ratings(run, turn_ids={turn.pk})
    current = {
        (d.axis, d.label): d
        for d in _differences(ratings, _restricted(golden, {turn.pk}), index)
        if d.turn_id == turn.pk
    }
    difference = current.get((axis, label))
    if difference is None:
        raise AdjudicationRejected("이 발화에서 평가자와 골든 세트가 이 라벨로 다르지 않습니다(이미 같거나 없는 항목).")
    try:
        with transaction.atomic():
            decision = AdjudicationDecision.objects.create(
                run=run,
                turn=turn,
                axis=axis,
                label=label,
                golden=difference.golden,
                rater=difference.rater,
                outcome=outcome,
                note=note.strip(),
                decided_by=decided_by,
            )
    except IntegrityError:
        raise AdjudicationRejected("이 차이는 이미 판정했습니다.") from None
    if outcome == Outcome.ACCEPTED:
        why = f"주석 실행 #{run.pk}({run.rater}) 판정" + (f": {note.strip()}" if note.strip() else "")
        try:
            turn_labels_update(
                turn=turn, changed_by=decided_by, via="adjudication", note=why, **_accepted(difference, golden)
            )
        except LabelRejected as rejected:
            raise AdjudicationRejected(" ".join(m for ms in rejected.problems.values() for m in ms)) from None
    return decision


def _accepted(difference: Difference, golden: Ratings) -> dict:
    """The label service's arguments that make the golden side say what the rater said."""
    axis, turn = difference.axis, difference.turn_id
    if axis in MULTI_LABEL_AXES:
        labels = set(golden.axis(axis)[turn])
        labels = labels | {difference.label} if difference.rater == PRESENT else labels - {difference.label}
        return {axis: sorted(labels)}
    if axis == "dialog_act":
        return {"dialog_act": None if difference.rater == NO_ACT else difference.rater}
    return {"stage": difference.rater}
