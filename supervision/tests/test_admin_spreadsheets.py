"""django-import-export in the admin: the roster import, label aliases, and the supervisors' exports.

Driven through the admin screens as staff and supervisors with their real role permissions (never only a
superuser): the import preview, the confirm step, all-or-nothing refusals with Korean messages naming the
row, formula-safe cells, and exports scoped like the change list.
"""

from __future__ import annotations

import csv
import datetime
import io

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from openpyxl import load_workbook

from supervision.api.tests.conftest import add_comments, import_session
from supervision.gauge.services import gauge_compute
from supervision.models import TraineeAssignment
from supervision.roles import roles_of
from supervision.tags.services import tag_evidence_add
from taxonomy.models import LabelAlias

User = get_user_model()
ROSTER_URL = "/admin/supervision/traineeassignment/import/"
CSV, XLSX = "0", "1"  # settings.IMPORT_FORMATS order
STRONG = "Qx7-plum-orbit-2026"  # an obviously fake initial password that passes the validators


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def upload(client: Client, url: str, text: str, name: str = "cohort.csv"):
    data = io.BytesIO(text.encode("utf-8"))
    data.name = name
    return client.post(url, {"import_file": data, "format": CSV, "resource": "0"})


def confirm(client: Client, url: str, preview) -> object:
    """Posts the preview's confirm form back, as the 'confirm import' button does."""
    form = preview.context["confirm_form"]
    return client.post(url.replace("/import/", "/process_import/"), {**form.initial, "resource": "0"})


def offers_confirm(response) -> bool:
    return response.context.get("confirm_form") is not None


def roster(*rows: str) -> str:
    return "\n".join(["username,role,supervisor,initial_password", *rows]) + "\n"


def messages_of(response) -> list[str]:
    """Every row error the preview shows, as text."""
    result = response.context["result"]
    found = [str(e.error) for e in result.base_errors]
    for row in result.invalid_rows:
        for messages in row.error_dict.values():
            found += [str(m) for m in messages]
    for _number, errors in result.row_errors():
        found += [str(e.error) for e in errors]
    return found


# --- roster -----------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_it_previews_then_creates_a_cohort_with_roles_supervisors_and_password_policy(cast):
    staff = logged_in(cast.staff)
    text = roster(
        "cohort_sup,supervisor,,",
        f"cohort_t1,trainee,supervisor_a,{STRONG}",
        "cohort_t2,trainee,cohort_sup,",
        "cohort_staff,staff,,",
    )
    preview = upload(staff, ROSTER_URL, text)
    assert preview.status_code == 200
    assert offers_confirm(preview) and not messages_of(preview)
    assert not User.objects.filter(username__startswith="cohort_").exists()  # the preview writes nothing
    page = preview.content.decode()
    assert "cohort_t1" in page and "supervisor_a" in page and "(설정됨)" in page and STRONG not in page

    done = confirm(staff, ROSTER_URL, preview)
    assert done.status_code == 302
    users = {u.username: u for u in User.objects.filter(username__startswith="cohort_")}
    assert {name: sorted(roles_of(u)) for name, u in users.items()} == {
        "cohort_sup": ["supervisor"],
        "cohort_t1": ["trainee"],
        "cohort_t2": ["trainee"],
        "cohort_staff": ["staff"],
    }
    assert TraineeAssignment.objects.get(trainee=users["cohort_t1"]).supervisor == cast.supervisor_a
    assert TraineeAssignment.objects.get(trainee=users["cohort_t2"]).supervisor == users["cohort_sup"]
    assert users["cohort_t1"].check_password(STRONG)
    assert not users["cohort_t2"].has_usable_password()  # blank: no log-in until staff set one
    assert users["cohort_sup"].is_staff and not users["cohort_t1"].is_staff


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("bad_row", "column", "words"),
    [
        ("cohort_t3,trainee,nobody_such,", "supervisor", "nobody_such"),
        ("cohort_t3,director,,", "role", "director"),
        ("cohort_t1,trainee,supervisor_a,", "username", "중복"),
        ("trainee_b,trainee,supervisor_a,", "username", "이미 있는 사용자"),
        ("cohort_t3,supervisor,supervisor_a,", "supervisor", "수련생에게만"),
        ("cohort_t3,trainee,supervisor_a,1234", "initial_password", ""),
    ],
)
def test_it_refuses_the_whole_roster_for_one_bad_row_naming_row_and_column(cast, bad_row, column, words):
    staff = logged_in(cast.staff)
    users_before, assignments_before = User.objects.count(), TraineeAssignment.objects.count()
    text = roster("cohort_t1,trainee,supervisor_a,", "cohort_t2,trainee,supervisor_b,", bad_row)
    preview = upload(staff, ROSTER_URL, text)
    assert preview.status_code == 200
    assert not offers_confirm(preview)  # no confirm button: nothing can be written
    messages = messages_of(preview)
    assert any(m.startswith(f"4행(ROW 3) {column}:") and words in m for m in messages), messages
    assert User.objects.count() == users_before and TraineeAssignment.objects.count() == assignments_before


@pytest.mark.django_db
def test_it_refuses_every_bad_row_at_once_and_a_file_without_its_columns(cast):
    staff = logged_in(cast.staff)
    preview = upload(staff, ROSTER_URL, roster("x1,trainee,nobody,", "x2,boss,,", "x2,trainee,,"))
    messages = messages_of(preview)
    assert {m.split(":")[0] for m in messages} == {"2행(ROW 1) supervisor", "3행(ROW 2) role", "4행(ROW 3) username"}
    assert not User.objects.filter(username__in=["x1", "x2"]).exists()
    missing = upload(staff, ROSTER_URL, "name,group\nx9,trainee\n")
    assert missing.status_code == 200 and not offers_confirm(missing)
    assert not User.objects.filter(username="x9").exists()


@pytest.mark.django_db
def test_it_keeps_the_roster_import_to_staff(cast):
    assert logged_in(cast.supervisor_a).get(ROSTER_URL).status_code == 403
    assert logged_in(cast.staff).get(ROSTER_URL).status_code == 200
    response = upload(logged_in(cast.supervisor_a), ROSTER_URL, roster("sneaky,supervisor,,"))
    assert response.status_code == 403 and not User.objects.filter(username="sneaky").exists()


# --- label aliases ----------------------------------------------------------------------------------

ALIAS_URL = "/admin/taxonomy/labelalias/import/"


@pytest.mark.django_db
def test_it_imports_label_aliases_through_the_form_rules_and_exports_them(cast):
    staff = logged_in(cast.staff)
    preview = upload(staff, ALIAS_URL, "axis,alias,code\ntechnique,마음 읽어주기,reflection\n")
    assert not messages_of(preview)
    confirm(staff, ALIAS_URL, preview)
    alias = LabelAlias.objects.get(alias="마음 읽어주기")
    assert (alias.code, alias.seeded) == ("reflection", False)

    exported = export(staff, "/admin/taxonomy/labelalias/export/", "LabelAliasResource")
    assert exported[0][:3] == ["axis", "alias", "code"]
    assert ["technique", "마음 읽어주기", "reflection"] in [row[:3] for row in exported]


@pytest.mark.django_db
def test_it_refuses_bad_alias_rows_all_together(cast):
    staff = logged_in(cast.staff)
    count = LabelAlias.objects.count()
    text = "axis,alias,code\ntechnique,새 별칭,reflection\ntechnique,엉뚱한,no_such_code\nmood,무엇,reflection\n"
    messages = messages_of(upload(staff, ALIAS_URL, text))
    assert any(m.startswith("3행(ROW 2) code:") for m in messages) and any(
        m.startswith("4행(ROW 3) axis:") for m in messages
    )
    assert LabelAlias.objects.count() == count
    assert logged_in(cast.supervisor_a).get(ALIAS_URL).status_code == 403  # supervisors only view aliases


# --- exports ----------------------------------------------------------------------------------------


def export(client: Client, url: str, resource: str, fmt: str = CSV) -> list[list[str]]:
    from supervision import resources as portal_resources
    from taxonomy import resources as taxonomy_resources

    cls = getattr(portal_resources, resource, None) or getattr(taxonomy_resources, resource)
    fields = {f"{resource.lower()}_{name}": "on" for name in cls().get_export_order()}
    response = client.post(url, {"format": fmt, "resource": "0", **fields})
    assert response.status_code == 200, response.content[:500]
    if fmt == XLSX:
        sheet = load_workbook(io.BytesIO(response.content)).active
        return [["" if c.value is None else str(c.value) for c in row] for row in sheet.iter_rows()]
    return list(csv.reader(io.StringIO(response.content.decode("utf-8-sig"))))


@pytest.fixture
def reports(cast):
    """trainee_a (supervisor_a) and trainee_b (supervisor_b): a session each, a critique each (trainee_a's
    starting with '='), gauge snapshots and a tag each."""
    day = datetime.date(2026, 3, 5)
    session_a = import_session("XA01", 6, "trainee_a", held_on="2026-03-02")
    session_b = import_session("XB01", 6, "trainee_b", held_on="2026-03-03")
    formula = add_comments(session_a, cast.supervisor_a)
    formula.text = '=HYPERLINK("http://example.invalid","클릭")'
    formula.save()
    add_comments(session_b, cast.supervisor_b)
    gauge_compute(day=day)
    tag_evidence_add(trainee_id=cast.trainee_a.pk, tag="overuses_relational", event="=1+1", session_id=session_a.pk)
    tag_evidence_add(trainee_id=cast.trainee_b.pk, tag="rq_below_fair", event="B", session_id=session_b.pk)
    return cast


EXPORTS = [
    ("/admin/supervision/supervisorcomment/export/", "CommentResource", "trainee"),
    ("/admin/gauge/gaugesnapshot/export/", "GaugeSnapshotResource", "trainee"),
    ("/admin/tags/traineetag/export/", "TraineeTagResource", "trainee"),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("url", "resource", "column"), EXPORTS)
def test_it_exports_only_the_supervisors_own_trainees(reports, url, resource, column):
    def trainees(user) -> set[str]:
        rows = export(logged_in(user), url, resource)
        index = rows[0].index(column)
        return {row[index] for row in rows[1:]}

    assert trainees(reports.supervisor_a) == {"trainee_a"}
    assert trainees(reports.supervisor_b) == {"trainee_b"}
    assert trainees(reports.staff) == {"trainee_a", "trainee_b"}
    assert logged_in(reports.trainee_a).post(url, {"format": CSV}).status_code in (302, 403)


@pytest.mark.django_db
def test_it_exports_comments_filtered_like_the_change_list_with_their_deviation_fields(reports):
    staff = logged_in(reports.staff)
    url = f"/admin/supervision/supervisorcomment/export/?trainee_id={reports.trainee_b.pk}"
    rows = export(staff, url, "CommentResource")
    header, body = rows[0], rows[1:]
    assert {"dimension", "expected", "actual", "severity", "utterance_id", "session"} <= set(header)
    assert [row[header.index("session")] for row in body] == ["XB01"]  # no AI suggestion, trainee_b only
    record = dict(zip(header, body[0], strict=True))
    assert (record["dimension"], record["expected"], record["actual"], record["severity"]) == (
        "시기",
        "reflection",
        "interpretation",
        "minor",
    )


@pytest.mark.django_db
@pytest.mark.parametrize("fmt", [CSV, XLSX])
def test_it_never_exports_a_cell_as_a_formula(reports, fmt):
    rows = export(
        logged_in(reports.supervisor_a), "/admin/supervision/supervisorcomment/export/", "CommentResource", fmt
    )
    texts = [row[rows[0].index("text")] for row in rows[1:]]
    assert texts == ['\'=HYPERLINK("http://example.invalid","클릭")']
    for row in rows:
        assert not any(cell.startswith(("=", "+", "-", "@")) for cell in row), row


# --- who may open which screen ------------------------------------------------------------------------

SCREENS = {
    ROSTER_URL: {"trainee_a": 302, "supervisor_a": 403, "staff": 200},
    ALIAS_URL: {"trainee_a": 302, "supervisor_a": 403, "staff": 200},
    "/admin/taxonomy/labelalias/export/": {"trainee_a": 302, "supervisor_a": 200, "staff": 200},
    "/admin/supervision/supervisorcomment/export/": {"trainee_a": 302, "supervisor_a": 200, "staff": 200},
    "/admin/gauge/gaugesnapshot/export/": {"trainee_a": 302, "supervisor_a": 200, "staff": 200},
    "/admin/tags/traineetag/export/": {"trainee_a": 302, "supervisor_a": 200, "staff": 200},
}


@pytest.mark.django_db
@pytest.mark.parametrize("url", list(SCREENS))
def test_it_opens_each_import_and_export_screen_only_to_the_roles_it_serves(cast, url):
    """A trainee never reaches the admin (log-in page); supervisors export but never import."""
    for who, expected in SCREENS[url].items():
        assert logged_in(getattr(cast, who)).get(url).status_code == expected, who
