"""The one path that makes accounts: normalised, case-insensitive, create-only for the roster; the operator's
command keeps create-or-update through the same normaliser and never touches a superuser; reassignment is
its own service with history; the database holds the case rule too."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import IntegrityError, transaction

from supervision.models import TraineeAssignment
from supervision.people.services import (
    PersonRefused,
    normalize_username,
    portal_user_create,
    trainee_reassign,
)
from supervision.roles import Role, roles_of

User = get_user_model()


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (" kim ", "kim"),
        ("kim\t", "kim"),
        ("\u00a0kim", "kim"),
        ("ｋｉｍ", "kim"),
        ("\u3000kim\u3000", "kim"),
        (None, ""),
    ],
)
def test_it_normalises_a_username_once(raw, expected):
    assert normalize_username(raw) == expected


@pytest.mark.django_db
def test_it_refuses_every_problem_of_a_new_account_at_once(cast):
    with pytest.raises(PersonRefused) as refused:
        portal_user_create(username="has space", role="boss", supervisor_username="nobody", password="1")
    assert set(refused.value.problems) == {"username", "role", "supervisor"}
    with pytest.raises(PersonRefused) as refused:
        portal_user_create(username="new_one", role=Role.TRAINEE, supervisor_username="nobody", password="1")
    assert set(refused.value.problems) == {"supervisor", "initial_password"}
    assert not User.objects.filter(username__in=["has space", "new_one"]).exists()


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["TRAINEE_A", " trainee_a", "ｔｒａｉｎｅｅ_a"])
def test_it_never_updates_an_existing_account_on_create(cast, name):
    before = User.objects.get(username="trainee_a")
    with pytest.raises(PersonRefused) as refused:
        portal_user_create(username=name, role=Role.STAFF, password="Brand-new-pass-2026")
    assert "이미 있는 사용자 'trainee_a'" in refused.value.problems["username"][0]
    after = User.objects.get(pk=before.pk)
    assert after.password == before.password and roles_of(after) == {Role.TRAINEE} and not after.is_staff
    assert TraineeAssignment.objects.get(trainee=after).supervisor == cast.supervisor_a


@pytest.mark.django_db
def test_the_database_refuses_a_username_that_differs_only_in_case(cast):
    with pytest.raises(IntegrityError), transaction.atomic():
        User.objects.create(username="Trainee_A")


@pytest.mark.django_db
def test_the_operators_command_updates_through_the_same_normaliser_and_never_a_superuser(cast):
    call_command("create_portal_user", " Trainee_A ", "--role", "trainee", "--supervisor", "SUPERVISOR_B")
    assert User.objects.filter(username__iexact="trainee_a").count() == 1
    assert TraineeAssignment.objects.get(trainee__username="trainee_a").supervisor == cast.supervisor_b
    call_command("create_portal_user", "trainee_a", "--role", "trainee", "--supervisor", "supervisor_b")  # idempotent

    User.objects.create_superuser("root_admin", password="Orig-root-pass-2026")
    with pytest.raises(CommandError, match="최고 관리자"):
        call_command("create_portal_user", "ROOT_ADMIN ", "--role", "trainee", "--password", "Other-pass-2026")
    root = User.objects.get(username="root_admin")
    assert root.is_superuser and root.check_password("Orig-root-pass-2026") and not roles_of(root)

    with pytest.raises(CommandError, match="username"):
        call_command("create_portal_user", "<img src=x>", "--role", "trainee")


@pytest.mark.django_db
def test_it_keeps_who_moved_a_trainee_when_and_why(cast):
    trainee_reassign(trainee=cast.trainee_a, supervisor=cast.supervisor_b, by=cast.staff, reason="휴직")
    assignment = TraineeAssignment.objects.get(trainee=cast.trainee_a)
    assert assignment.supervisor == cast.supervisor_b
    latest = assignment.history.first()
    assert (latest.supervisor_id, latest.history_user, latest.history_change_reason) == (
        cast.supervisor_b.pk,
        cast.staff,
        "휴직",
    )
    with pytest.raises(PersonRefused):
        trainee_reassign(trainee=cast.trainee_a, supervisor=cast.trainee_b, by=cast.staff)
    with pytest.raises(PersonRefused):
        trainee_reassign(trainee=cast.supervisor_a, supervisor=cast.supervisor_b, by=cast.staff)


@pytest.mark.django_db
def test_staff_move_a_trainee_in_the_assignment_admin_and_supervisors_cannot(cast, client):
    assignment = TraineeAssignment.objects.get(trainee=cast.trainee_a)
    url = f"/admin/supervision/traineeassignment/{assignment.pk}/change/"
    client.force_login(cast.supervisor_a)  # sees their trainee's assignment, cannot move it
    assert client.get(url).status_code == 200
    assert client.post(url, {"supervisor": cast.supervisor_b.pk, "reason": "탈취"}).status_code == 403
    assert TraineeAssignment.objects.get(pk=assignment.pk).supervisor == cast.supervisor_a

    client.force_login(cast.staff)
    form = client.get(url).context["adminform"].form
    assert set(form.fields["supervisor"].queryset) == {cast.supervisor_a, cast.supervisor_b}  # supervisors only
    response = client.post(url, {"supervisor": cast.supervisor_b.pk, "reason": "담당 조정"})
    assert response.status_code == 302
    assignment.refresh_from_db()
    assert assignment.supervisor == cast.supervisor_b
    assert assignment.history.first().history_change_reason == "담당 조정"
    history = client.get(url.replace("/change/", "/history/"))
    assert history.status_code == 200 and "담당 조정" in history.content.decode()
    client.force_login(cast.supervisor_b)
    assert client.get(url.replace("/change/", "/history/")).status_code == 200
    client.force_login(cast.supervisor_a)  # no longer theirs
    assert client.get(url.replace("/change/", "/history/")).status_code == 404


@pytest.mark.django_db(transaction=True)
def test_the_migration_names_usernames_that_clash_by_case(cast):
    call_command("migrate", "people", "zero", verbosity=0)
    try:
        User.objects.create(username="clash_kim")
        User.objects.create(username="CLASH_KIM")
        with pytest.raises(RuntimeError, match=r"clash_kim / CLASH_KIM|CLASH_KIM / clash_kim"):
            call_command("migrate", "people", verbosity=0)
    finally:
        User.objects.filter(username__iexact="clash_kim").delete()
        call_command("migrate", "people", verbosity=0)


@pytest.mark.django_db
def test_an_account_costs_the_same_few_queries_however_many_permissions_the_roles_hold(
    cast, django_assert_max_num_queries
):
    # The role groups' permissions are read in one query (a roster of fifty trainees made fifty accounts
    # with about eighty lookups each).
    with django_assert_max_num_queries(30):
        user = portal_user_create(username="trainee_c", role=Role.TRAINEE, supervisor_username="supervisor_a")
    assert roles_of(User.objects.get(pk=user.pk)) == {Role.TRAINEE}
    staff_group = user.groups.model.objects.get(name=Role.STAFF)
    assert staff_group.permissions.filter(codename="view_accessattempt").exists()


@pytest.mark.django_db
def test_the_assignment_form_says_which_trainees_it_offers_and_where_new_ones_come_from(client, cast):
    # Every trainee of the cast has a supervisor: the list is empty, and the form says why.
    client.force_login(cast.staff)
    page = client.get("/admin/supervision/traineeassignment/add/").content.decode()
    assert "아직 슈퍼바이저가 없는 수련생만 고를 수 있습니다" in page and "「가져오기」" in page
