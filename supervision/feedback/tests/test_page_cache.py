"""The trainee's kept pages (supervision/pagecache.py): what a write changes shows on the next view, a trainee
never gets a page kept for someone else, and a page costs the same number of queries for 1 session or 8,
for 6 turns or 60, whether it is built or kept."""

import datetime
import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from supervision import pagecache
from supervision.commenting import comment_reply_answer, supervisor_comment_create
from supervision.feedback.tests.factories import make_session
from supervision.labelling import turn_labels_update
from supervision.models import CommentKind, SupervisorComment
from supervision.nightly import nightly_review
from supervision.testing import log_in

pytestmark = pytest.mark.django_db


def page(client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, url
    return response.content.decode()


def queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


def sessions_api(client) -> dict:
    response = client.get("/api/v1/sessions/")
    assert response.status_code == 200
    return {row["code"]: row for row in response.json()["results"]}


@pytest.fixture
def session(cast):
    return make_session("KEPT_A1", 12, trainee="trainee_a")


@pytest.fixture
def trainee(client, cast, session):
    """trainee_a with all three pages viewed once (so kept)."""
    log_in(client, cast.trainee_a)
    for url in ("/feedback/", f"/feedback/sessions/{session.pk}/", "/api/v1/sessions/"):
        assert client.get(url).status_code == 200
    return client


# --- (a) queries do not grow with sessions or turns, built or kept -------------------------------------------

URLS = ("/feedback/", "session", "/api/v1/sessions/")


@pytest.mark.parametrize("url", URLS)
def test_a_trainees_page_costs_the_same_queries_for_one_session_or_eight_built_or_kept(client, cast, url):
    first = make_session("COUNT_1", 6, trainee="trainee_a", held_on="2026-11-01")
    log_in(client, cast.trainee_a)
    address = f"/feedback/sessions/{first.pk}/" if url == "session" else url
    client.get("/feedback/")  # the log-in's session row read once
    pagecache.forget_all()
    built_one = queries(client, address)
    kept_one = queries(client, address)
    for n in range(2, 9):
        make_session(f"COUNT_{n}", 6, trainee="trainee_a", held_on=f"2026-11-{n:02d}")
    built_many = queries(client, address)  # the imports dropped the kept page
    kept_many = queries(client, address)
    assert (built_many, kept_many) == (built_one, kept_one)
    # kept: the request's own reads (session, user, roles), nothing of the page's
    assert kept_one == 3 < built_one
    if url != "session":
        text = page(client, address)
        assert all(f"COUNT_{n}" in text for n in range(1, 9))


def test_the_session_page_costs_the_same_queries_for_six_turns_or_sixty(client, cast):
    small = make_session("TURNS_6", 6, trainee="trainee_a")
    large = make_session("TURNS_60", 60, trainee="trainee_a")
    log_in(client, cast.trainee_a)
    client.get("/feedback/")
    built = [queries(client, f"/feedback/sessions/{s.pk}/") for s in (small, large)]
    kept = [queries(client, f"/feedback/sessions/{s.pk}/") for s in (small, large)]
    assert built[0] == built[1] and kept == [3, 3]
    text = page(client, f"/feedback/sessions/{large.pk}/")
    assert all(f"합성 발화 TURNS_60 {seq}번째 문장입니다." in text for seq in range(60))


# --- (b) a write shows on the next view ----------------------------------------------------------------------


def test_a_label_edit_shows_on_the_next_view_of_the_session_page(trainee, cast, session):
    url = f"/feedback/sessions/{session.pk}/"
    chip = '<li class="chip cat-EXPLORATORY">탐색 <span class="code">exploration</span></li>'

    def card() -> str:
        return page(trainee, url).split('id="turn-2"', 1)[1].split('id="turn-3"', 1)[0]

    assert chip not in card() and '<span class="code">reflection</span>' in card()
    turn_labels_update(
        turn=session.turns.get(seq=2), changed_by=cast.supervisor_a, via="admin", techniques=["exploration"]
    )
    assert chip in card() and '<span class="code">reflection</span>' not in card()


def test_a_new_critique_shows_on_the_next_view_of_every_page(trainee, cast, session):
    shown = SupervisorComment.objects.filter(turn__session=session, is_suggestion=False).count()
    assert f"새 논평 {shown}" in page(trainee, "/feedback/")
    assert sessions_api(trainee)["KEPT_A1"]["critique_count"] == shown
    supervisor_comment_create(
        turn=session.turns.get(seq=6),
        kind=CommentKind.CRITIQUE,
        text="새로 남긴 합성 논평입니다.",
        written_by=cast.supervisor_a,
    )
    assert f"새 논평 {shown + 1}" in page(trainee, "/feedback/")
    assert "새로 남긴 합성 논평입니다." in page(trainee, f"/feedback/sessions/{session.pk}/")
    assert sessions_api(trainee)["KEPT_A1"]["critique_count"] == shown + 1


def test_a_supervisors_answer_shows_on_the_next_view(trainee, cast, session):
    comment = SupervisorComment.objects.filter(turn__session=session, is_suggestion=False).first()
    trainee.post(f"/feedback/comments/{comment.pk}/replies/", {"text": "합성 답글입니다."})
    assert "합성 답글입니다." in page(trainee, f"/feedback/sessions/{session.pk}/")
    comment_reply_answer(comment=comment, user=cast.supervisor_a, text="슈퍼바이저의 합성 답입니다.")
    assert "슈퍼바이저의 합성 답입니다." in page(trainee, f"/feedback/sessions/{session.pk}/")


def test_a_read_marker_shows_on_the_next_view(trainee, cast, session):
    url = f"/feedback/sessions/{session.pk}/"
    comment = SupervisorComment.objects.filter(turn__session=session, is_suggestion=False).first()
    shown = SupervisorComment.objects.filter(turn__session=session, is_suggestion=False).count()

    def classes(text: str) -> list[str]:
        return re.search(rf'<article class="([^"]*)" id="comment-{comment.pk}"', text).group(1).split()

    assert "unread" in classes(page(trainee, url))
    trainee.post(f"/feedback/comments/{comment.pk}/read/")
    text = page(trainee, url)
    assert "unread" not in classes(text)
    assert f"이 회기의 새 논평 {shown - 1}개" in text
    assert f"새 논평 {shown - 1}" in page(trainee, "/feedback/")


def test_a_night_shows_on_the_next_view_of_the_dashboard(trainee, cast):
    assert "아직 계산된 검토 지표가 없습니다" in page(trainee, "/feedback/")
    nightly_review(day=datetime.date(2026, 11, 10))
    text = page(trainee, "/feedback/")
    assert "아직 계산된 검토 지표가 없습니다" not in text and "2026-11-10 기준" in text


def test_a_turn_edit_shows_on_the_next_view(trainee, cast, session):
    from supervision.services import turn_update

    turn = session.turns.get(seq=4)
    turn_update(turn=turn, stage=turn.stage, text="고쳐 쓴 합성 발화입니다.", nonverbal=[], dialog_act=turn.dialog_act)
    assert "고쳐 쓴 합성 발화입니다." in page(trainee, f"/feedback/sessions/{session.pk}/")


def test_a_session_edited_in_the_admin_shows_and_one_given_to_another_trainee_is_gone(trainee, cast, session):
    session.title = "관리 화면에서 고친 합성 제목"
    session.save()  # as the admin's session form saves it
    assert "관리 화면에서 고친 합성 제목" in page(trainee, "/feedback/")
    session.trainee = cast.trainee_b
    session.save()
    assert trainee.get(f"/feedback/sessions/{session.pk}/").status_code == 404
    assert "KEPT_A1" not in page(trainee, "/feedback/") and "KEPT_A1" not in sessions_api(trainee)


def test_an_import_shows_on_the_next_view(trainee, cast):
    make_session("KEPT_A2", 4, trainee="trainee_a", held_on="2026-11-20")
    assert "KEPT_A2" in page(trainee, "/feedback/")
    assert "KEPT_A2" in sessions_api(trainee)


def test_a_write_changes_the_pages_again_when_it_commits(django_capture_on_commit_callbacks, cast, session):
    """A page built between the write and its commit read the database as before the write: the commit drops
    it too, so no page older than the write outlives it."""
    before, other = pagecache._versions(cast.trainee_a.pk), pagecache._versions(cast.trainee_b.pk)
    with django_capture_on_commit_callbacks() as callbacks:
        supervisor_comment_create(
            turn=session.turns.get(seq=6),
            kind=CommentKind.CRITIQUE,
            text="커밋 전 합성 논평",
            written_by=cast.supervisor_a,
        )
        during = pagecache._versions(cast.trainee_a.pk)
    assert during != before
    for callback in callbacks:
        callback()
    assert pagecache._versions(cast.trainee_a.pk) not in (before, during)
    assert pagecache._versions(cast.trainee_b.pk) == other  # another trainee's pages stay kept


def test_a_message_is_shown_once_and_the_kept_page_carries_none(trainee, cast, session):
    trainee.post("/feedback/comments/read-all/")
    assert "읽음으로 표시했습니다" in page(trainee, "/feedback/")
    assert "읽음으로 표시했습니다" not in page(trainee, "/feedback/")


# --- (c) nobody gets another's kept page ----------------------------------------------------------------------


def test_a_trainee_never_gets_another_trainees_kept_pages(trainee, cast, session):
    make_session("KEPT_B1", 6, trainee="trainee_b")
    other = log_in(Client(), cast.trainee_b)
    text = page(other, "/feedback/")
    assert "KEPT_B1" in text and "KEPT_A1" not in text and "trainee_b" in text and "trainee_a" not in text
    assert list(sessions_api(other)) == ["KEPT_B1"]
    assert other.get(f"/feedback/sessions/{session.pk}/").status_code == 404
    # and trainee_a's kept pages are still trainee_a's
    assert "KEPT_A1" in page(trainee, "/feedback/") and "KEPT_B1" not in page(trainee, "/feedback/")


def test_a_supervisor_gets_their_own_view_of_a_page_the_trainee_has_kept(trainee, cast, session):
    url = f"/feedback/sessions/{session.pk}/"
    assert "읽음으로 표시" in page(trainee, url)
    supervisor = page(log_in(Client(), cast.supervisor_a), url)
    assert "읽음으로 표시" not in supervisor and "답글 남기기" not in supervisor
    assert ">supervisor_a</span>" in supervisor


def test_each_browser_gets_its_own_csrf_token_in_a_kept_page(cast, session):
    url = f"/feedback/sessions/{session.pk}/"
    tokens = []
    for _ in range(2):
        browser = log_in(Client(enforce_csrf_checks=True), cast.trainee_a)
        text = page(browser, url)
        assert pagecache.CSRF_PLACEHOLDER not in text
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', text).group(1)
        tokens.append(token)
        comment = SupervisorComment.objects.filter(turn__session=session, is_suggestion=False).first()
        response = browser.post(f"/feedback/comments/{comment.pk}/read/", {"csrfmiddlewaretoken": token})
        assert response.status_code == 302  # the token is good for this browser
    assert tokens[0] != tokens[1]


def test_a_write_changes_the_pages_even_while_the_cache_skips_a_slow_redis(cast, session, caplog):
    """The cache's breaker (portal/cache.py) skips Redis for a while after one failure; a version change does
    not, or the pages other processes keep would outlive the write."""
    from django.core.cache import caches

    backend = caches["default"]
    if not hasattr(backend, "_breaker"):
        pytest.skip("the cache is not Redis here")
    before = pagecache._versions(cast.trainee_a.pk)
    backend._breaker.trip("test", "get", OSError("a slow moment"))
    supervisor_comment_create(
        turn=session.turns.get(seq=6),
        kind=CommentKind.CRITIQUE,
        text="잠깐 느린 동안의 논평",
        written_by=cast.supervisor_a,
    )
    backend._breaker._down_until = 0.0  # Redis answers again
    assert pagecache._versions(cast.trainee_a.pk) != before


# --- (e) a deploy that changes only a template is not served the pages kept before it ------------------------


@pytest.fixture
def own_template_folder(settings):
    """A template folder of the project's own (under BASE_DIR, as templates/ is), read by the release key."""
    import shutil
    import uuid

    folder = settings.BASE_DIR / "var" / f"test-templates-{uuid.uuid4().hex}"
    folder.mkdir(parents=True)
    settings.TEMPLATES = [{**settings.TEMPLATES[0], "DIRS": [*settings.TEMPLATES[0]["DIRS"], folder]}]
    pagecache._release.cache_clear()
    yield folder
    shutil.rmtree(folder)
    pagecache._release.cache_clear()


def test_a_changed_template_is_a_new_release_and_the_kept_page_is_built_again(trainee, own_template_folder):
    (own_template_folder / "note.html").write_text("<p>전</p>")
    pagecache._release.cache_clear()
    trainee.get("/feedback/")
    kept = queries(trainee, "/feedback/")
    (own_template_folder / "note.html").write_text("<p>후</p>")
    pagecache._release.cache_clear()  # a new process after the deploy
    rebuilt = queries(trainee, "/feedback/")
    assert rebuilt > kept  # built from the database again, then kept under the new release
    assert queries(trainee, "/feedback/") == kept


def test_the_release_reads_our_templates_only():
    import sys
    from pathlib import Path

    files = pagecache._own_templates()
    assert any(path.name == "dashboard.html" for path in files)
    assert not any(path.is_relative_to(Path(sys.prefix).resolve()) for path in files)  # Django's admin etc.


def test_the_release_reads_our_own_code_that_draws_pages_and_not_tests_or_libraries():
    # A deploy that changed only a chart (supervision/feedback/charts.py) served the kept, old drawing.
    import sys
    from pathlib import Path

    files = pagecache._own_code()
    names = {path.relative_to(Path(pagecache.settings.BASE_DIR).resolve()).as_posix() for path in files}
    assert {"supervision/feedback/charts.py", "supervision/trajectory/display.py"} <= names
    assert not any("tests" in path.parts for path in files)
    assert not any(path.is_relative_to(Path(sys.prefix).resolve()) for path in files)
