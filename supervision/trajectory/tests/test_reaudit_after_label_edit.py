"""A label edit re-audits its session (queued after the edit commits, like an import's audit), and until the
audit has run the trainee's page says the explanation is being brought up to date (issue 33, item 4)."""

import pytest

from supervision.labelling import turn_labels_update
from supervision.testing import import_session, log_in
from supervision.trajectory.models import AuditedRevision, TrajectoryAudit
from supervision.trajectory.selectors import audit_pending
from supervision.trajectory.services import trajectory_audit_sessions

pytestmark = pytest.mark.django_db

PENDING = "궤적 감사를 다시 계산하고 있습니다"


def test_it_re_audits_the_session_after_a_label_edit_and_says_so_meanwhile(
    client, cast, django_capture_on_commit_callbacks
):
    session = import_session("RA01", 8, "trainee_a")
    trajectory_audit_sessions(session_ids=[session.pk])
    assert not audit_pending(session)
    before = AuditedRevision.objects.get(session=session).revision
    page = log_in(client, cast.trainee_a).get(f"/feedback/sessions/{session.pk}/")
    assert PENDING not in page.content.decode()

    turn = session.turns.get(seq=2)
    with django_capture_on_commit_callbacks() as queued:
        turn_labels_update(
            turn=turn, changed_by=cast.supervisor_a, via="admin", techniques=["reflection", "cognitive_restructuring"]
        )
    assert queued, "the label edit queues no audit"
    assert audit_pending(session)
    assert PENDING in client.get(f"/feedback/sessions/{session.pk}/").content.decode()

    for callback in queued:
        callback()
    assert AuditedRevision.objects.get(session=session).revision > before
    assert not audit_pending(session)
    assert TrajectoryAudit.objects.filter(session=session).exists()
    assert PENDING not in client.get(f"/feedback/sessions/{session.pk}/").content.decode()


def test_an_edit_that_changes_nothing_queues_nothing(cast, django_capture_on_commit_callbacks):
    session = import_session("RA02", 4, "trainee_a")
    turn = session.turns.get(seq=0)
    with django_capture_on_commit_callbacks() as queued:
        turn_labels_update(turn=turn, changed_by=cast.supervisor_a, via="admin", techniques=["reflection"])
    assert queued == []
