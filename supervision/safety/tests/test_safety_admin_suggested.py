"""The "안전 검토" queue lists the label suggester's events (CONTRACT §9: client turns of sessions with no
curated client state whose suggestion holds a safety-critical state) with the badge 「AI 추정」 and no review
form, beside the curated events, which are unchanged — as a supervisor and as staff with their real
permissions (the cast), never as a superuser."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import call_command

from supervision.importing.tests.sheets import ENGLISH_HEADER, write_csv
from supervision.models import Session
from supervision.safety.tests.factories import script
from supervision.suggesting.models import SuggestionDismissal
from supervision.suggesting.selectors import current_run
from supervision.suggesting.tests.test_decisions import _force
from supervision.suggesting.tests.test_import_suggestions import unlabelled_rows

pytestmark = pytest.mark.django_db

QUEUE = "/admin/safety/safetyreview/"
BADGE = 'class="badge-suggested ai-estimate"'
SI, SH, RA = "suicidal_ideation_admit", "self_harm_disclosure", "risk_assessment"


def unlabelled_session(tmp_path, code, trainee, held_on=None):
    rows = unlabelled_rows(code)
    if held_on:
        for row in rows:
            row[-1] = held_on
    path = write_csv(tmp_path / f"{code}.csv", ENGLISH_HEADER, rows)
    call_command("import_transcripts", str(path), "--trainee", trainee, stdout=io.StringIO())
    session = Session.objects.get(code=code)
    turns = list(session.turns.order_by("seq"))
    for turn in turns:  # pinned: what the model says is the model's; only these two turns hold a state
        _force(turn, [])
    _force(turns[1], [SH])
    _force(turns[3], [SI])
    return session, turns


@pytest.fixture
def world(cast, tmp_path):
    return {
        "curated": script("SQC1", f"K:{SI}", "C", "K", "C", held_on="2026-11-01"),
        "mine": unlabelled_session(tmp_path, "SQAI1", "trainee_a"),
        "theirs": unlabelled_session(tmp_path, "SQAI2", "trainee_b"),
    }


def events_on(page: str) -> list[str]:
    return re.findall(r'<li class="(safety-event[^"]*)" id="([^"]+)"', page)


def test_a_supervisor_sees_their_trainees_suggested_events_with_the_badge_and_no_review_form(client, cast, world):
    client.force_login(cast.supervisor_a)
    page = client.get(QUEUE).content.decode()
    mine, turns = world["mine"]
    assert page.count(BADGE) == 2 and ">AI 추정</span>" in page
    assert "SQAI1" in page and "SQAI2" not in page  # another supervisor's trainee
    listed = dict((id_, classes) for classes, id_ in events_on(page))
    suggested = {f"event-suggested-{turns[1].pk}-{SH}", f"event-suggested-{turns[3].pk}-{SI}"}
    assert suggested <= set(listed) and all("suggested" in listed[i] for i in suggested)
    # no review form for them: the link goes to the transcript's turn, where the supervisor decides
    assert page.count('class="review-form"') == 1
    assert f"/admin/supervision/session/{mine.pk}/change/#turn-{turns[1].seq}" in page
    assert "회기 화면에서 제안을 수락하거나 기각하세요" in page
    assert turns[1].text in page and turns[3].text in page  # the disclosure itself


def test_curated_events_are_listed_as_before(client, cast, world):
    client.force_login(cast.supervisor_a)
    page = client.get(QUEUE).content.decode()
    curated = [(c, i) for c, i in events_on(page) if not i.startswith("event-suggested-")]
    assert len(curated) == 1 and "suggested" not in curated[0][0] and "unanswered" in curated[0][0]
    block = page[page.index(f'id="{curated[0][1]}"') :]
    block = block[: block.index("</li>")]
    assert BADGE not in block and 'class="review-form"' in block and "SQC1" in block


def test_suggested_events_are_never_under_reviewed_and_follow_the_answered_filter(client, cast, world):
    client.force_login(cast.supervisor_a)
    assert BADGE not in client.get(QUEUE, {"show": "reviewed"}).content.decode()
    assert client.get(QUEUE, {"show": "all"}).content.decode().count(BADGE) == 2


def test_a_dismissed_suggestion_leaves_the_queue(client, cast, world):
    _session, turns = world["mine"]
    SuggestionDismissal.objects.create(run=current_run(), turn=turns[1], label=SH, dismissed_by=cast.supervisor_a)
    client.force_login(cast.supervisor_a)
    page = client.get(QUEUE).content.decode()
    assert page.count(BADGE) == 1 and f"event-suggested-{turns[1].pk}-{SH}" not in page


def test_staff_see_every_suggested_event_and_review_nothing(client, cast, world):
    client.force_login(cast.staff)
    page = client.get(QUEUE).content.decode()
    assert page.count(BADGE) == 4 and "SQAI1" in page and "SQAI2" in page
    assert 'class="review-form"' not in page


def test_a_trainee_never_reaches_the_queue(client, cast, world):
    client.force_login(cast.trainee_a)
    response = client.get(QUEUE)
    assert response.status_code in (302, 403) and BADGE not in response.content.decode()
