"""The outside review's attacks on the spreadsheet screens, replayed through the real admin views as staff:
a real log-in, CSRF enforced, the preview then the confirm step exactly as a browser posts them.

Each test is one row of the review's table (issue 31): a look-alike username that reached the superuser,
rows that moved trainees and demoted staff, a confirm step that opened a file named by the client, a
decompression bomb, export URLs that answered 500, usernames Django's own validator refuses.
"""

from __future__ import annotations

import io
import re
import tempfile
import time
import uuid
import zipfile
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from supervision.models import TraineeAssignment
from supervision.roles import Role, roles_of
from supervision.testing import PASSWORD

User = get_user_model()
ROSTER_URL = "/admin/supervision/traineeassignment/import/"
CONFIRM_URL = "/admin/supervision/traineeassignment/process_import/"
ALIAS_URL = "/admin/taxonomy/labelalias/import/"
CSV, XLSX = "0", "1"
ROOT_PASSWORD = "Orig-root-pass-2026"
TAKEOVER = "Taken-over-pass-2026"


class AdminSession:
    """One person at the admin: logged in through /admin/login/, every POST carrying the CSRF token the
    pages gave (``enforce_csrf_checks``: a forgotten token answers 403 here as in production)."""

    def __init__(self, username: str, password: str = PASSWORD) -> None:
        self.client = Client(enforce_csrf_checks=True)
        self.client.get("/admin/login/")
        response = self.post("/admin/login/", {"username": username, "password": password, "next": "/admin/"})
        assert response.status_code == 302, f"log-in as {username} failed"

    def token(self) -> str:
        return self.client.cookies["csrftoken"].value

    def get(self, url: str, **kwargs):
        return self.client.get(url, **kwargs)

    def post(self, url: str, data: dict, **kwargs):
        return self.client.post(url, {**data, "csrfmiddlewaretoken": self.token()}, **kwargs)

    def upload(self, url: str, content: bytes, name: str = "cohort.csv", fmt: str = CSV):
        self.get(url)
        data = io.BytesIO(content)
        data.name = name
        return self.post(url, {"import_file": data, "format": fmt, "resource": "0"})

    def confirm(self, preview, url: str = CONFIRM_URL, **overrides):
        """Posts the confirm form back as the page's button does (``overrides`` are what an attacker edits)."""
        fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', preview.content.decode()))
        fields.pop("csrfmiddlewaretoken", None)
        return self.post(url, {**fields, **overrides})


def roster(*rows: str) -> bytes:
    return ("\n".join(["username,role,supervisor,initial_password", *rows]) + "\n").encode()


def offers_confirm(response) -> bool:
    return 'name="confirm"' in response.content.decode()


@pytest.fixture
def root_admin(cast):
    return User.objects.create_superuser("root_admin", password=ROOT_PASSWORD)


@pytest.fixture
def staff(cast):
    return AdminSession("staff")


def assert_untouched(user, password: str) -> None:
    fresh = User.objects.get(pk=user.pk)
    assert fresh.check_password(password), f"{user.username}'s password changed"
    assert (fresh.username, fresh.is_superuser, fresh.is_staff, fresh.is_active) == (
        user.username,
        user.is_superuser,
        user.is_staff,
        user.is_active,
    )
    assert roles_of(fresh) == roles_of(user)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "look_alike", ["root_admin ", "root_admin\t", "\u00a0root_admin", "ROOT_ADMIN", "ｒｏｏｔ_admin"]
)
def test_it_never_reaches_the_superuser_through_a_look_alike_username(root_admin, staff, look_alike):
    preview = staff.upload(ROSTER_URL, roster(f'"{look_alike}",staff,,{TAKEOVER}'))
    assert preview.status_code == 200
    page = preview.content.decode()
    assert not offers_confirm(preview)
    assert "2행" in page and "username" in page and "이미 있는 사용자" in page
    assert TAKEOVER not in page
    assert_untouched(root_admin, ROOT_PASSWORD)
    AdminSession("root_admin", ROOT_PASSWORD)  # the owner still logs in with their own password


@pytest.mark.django_db
def test_it_moves_no_trainee_and_demotes_no_one(cast, staff):
    before = dict(TraineeAssignment.objects.values_list("trainee__username", "supervisor__username"))
    preview = staff.upload(
        ROSTER_URL,
        roster(
            "evil_sup,supervisor,,", '"trainee_a ",trainee,evil_sup,', "Trainee_B,trainee,evil_sup,", "staff,trainee,,"
        ),
    )
    page = preview.content.decode()
    assert not offers_confirm(preview)
    for row in ("3행", "4행", "5행"):
        assert row in page
    assert not User.objects.filter(username="evil_sup").exists()
    assert dict(TraineeAssignment.objects.values_list("trainee__username", "supervisor__username")) == before
    assert Role.STAFF in roles_of(User.objects.get(username="staff"))


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["planted", "/etc/hostname", "../../etc/hostname", "..", ""])
def test_it_never_opens_or_deletes_a_file_the_confirm_form_names(cast, staff, name):
    planted = Path(tempfile.gettempdir()) / f"planted-{uuid.uuid4().hex}"
    planted.write_bytes(roster("planted_user,staff,,"))
    target = planted.name if name == "planted" else name
    response = staff.post(
        CONFIRM_URL, {"import_file_name": target, "original_file_name": "x.csv", "format": CSV, "resource": "0"}
    )
    assert response.status_code in (200, 400), response.status_code
    assert "파일을 다시 올려" in response.content.decode()
    assert planted.exists() and planted.read_bytes() == roster("planted_user,staff,,")
    assert not User.objects.filter(username="planted_user").exists()
    planted.unlink()


@pytest.mark.django_db
def test_it_refuses_a_foreign_or_reused_preview(cast, staff):
    from supervision.people.services import portal_user_create

    portal_user_create(username="staff_two", role=Role.STAFF, password=PASSWORD)
    preview = staff.upload(ROSTER_URL, roster("cohort_x,supervisor,,"))
    assert offers_confirm(preview)
    thief = AdminSession("staff_two")
    stolen = thief.confirm(preview)
    assert stolen.status_code in (200, 400) and "파일을 다시 올려" in stolen.content.decode()
    assert not User.objects.filter(username="cohort_x").exists()

    done = staff.confirm(preview, resource="9", format="7")  # edited hidden fields are not trusted either
    assert done.status_code == 302 and User.objects.filter(username="cohort_x").exists()
    again = staff.confirm(preview)
    assert again.status_code in (200, 400) and "파일을 다시 올려" in again.content.decode()


def xlsx_bomb(rows: int) -> bytes:
    """A tiny xlsx whose one sheet unpacks into ``rows`` rows of the same few cells."""
    # rows without their optional r= attributes are all the same bytes, so they compress about a thousandfold
    row = '<row><c t="inlineStr"><is><t>bomb_user</t></is></c><c t="inlineStr"><is><t>trainee</t></is></c></row>'
    sheet = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
        '<row><c t="inlineStr"><is><t>username</t></is></c><c t="inlineStr"><is><t>role</t></is></c></row>'
        + row * rows
        + "</sheetData></worksheet>"
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr(
            "[Content_Types].xml",
            '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="xml" ContentType="application/xml"/></Types>',
        )
        archive.writestr(
            "xl/workbook.xml",
            '<?xml version="1.0"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
            '<sheets><sheet name="s" sheetId="1"/></sheets></workbook>',
        )
        archive.writestr("xl/worksheets/sheet1.xml", sheet)
    return buffer.getvalue()


@pytest.mark.django_db
@pytest.mark.parametrize("url", [ROSTER_URL, ALIAS_URL])
def test_it_refuses_a_decompression_bomb_in_seconds_naming_the_setting(cast, staff, url):
    bomb = xlsx_bomb(600_000)
    assert len(bomb) < 300_000
    started = time.monotonic()
    response = staff.upload(url, bomb, name="bomb.xlsx", fmt=XLSX)
    elapsed = time.monotonic() - started
    page = response.content.decode()
    assert response.status_code == 200 and not offers_confirm(response)
    assert elapsed < 5, f"{elapsed:.1f} s"
    assert re.search(r"IMPORT_MAX_(ROWS|ZIP_RATIO|UNZIPPED_BYTES)", page), page[-2000:]
    assert not User.objects.filter(username="bomb_user").exists()


@pytest.mark.django_db
def test_it_refuses_files_over_the_byte_and_row_limits_before_parsing(cast, staff, settings):
    settings.IMPORT_MAX_BYTES = 1000
    big = staff.upload(ROSTER_URL, roster(*[f"user_{n:04d},trainee,," for n in range(100)]))
    assert not offers_confirm(big) and "IMPORT_MAX_BYTES" in big.content.decode()
    settings.IMPORT_MAX_BYTES = 20 * 1024 * 1024
    settings.IMPORT_MAX_ROWS = 10
    many = staff.upload(ROSTER_URL, roster(*[f"user_{n:04d},trainee,," for n in range(11)]))
    assert not offers_confirm(many) and "IMPORT_MAX_ROWS" in many.content.decode()
    assert not User.objects.filter(username__startswith="user_").exists()


EXPORT_URLS = [
    "/admin/supervision/supervisorcomment/export/",
    "/admin/gauge/gaugesnapshot/export/",
    "/admin/tags/traineetag/export/",
    "/admin/taxonomy/labelalias/export/",
]


@pytest.mark.django_db
@pytest.mark.parametrize("url", EXPORT_URLS)
@pytest.mark.parametrize(
    "query", ["?trainee_id=7", "?no_such_field=1", "?trainee__password__startswith=a", "?o=99", "?q=%00"]
)
@pytest.mark.parametrize("who", ["staff", "supervisor_a"])
def test_it_answers_an_unknown_export_filter_like_the_change_list(cast, url, query, who):
    person = AdminSession(who)
    shown = person.get(url + query)
    assert shown.status_code < 500, shown.status_code
    person.get(url)
    posted = person.post(url + query, {"format": CSV, "resource": "0"})
    assert posted.status_code < 500, posted.status_code
    if posted.status_code == 200 and posted.get("Content-Disposition"):
        assert "password" not in posted.content.decode("utf-8-sig")


@pytest.mark.django_db
@pytest.mark.parametrize(
    "username", ["<img src=x onerror=alert(1)>", "has space user", "SUPERVISOR_A", "Supervisor_a", "a" * 151]
)
def test_it_refuses_usernames_django_refuses_and_case_variants(cast, staff, username):
    preview = staff.upload(ROSTER_URL, roster(f'"{username}",trainee,,'))
    assert not offers_confirm(preview)
    assert "2행" in preview.content.decode()
    assert User.objects.filter(username__iexact=username.strip()).count() == (
        1 if username.lower() == "supervisor_a" else 0
    )


@pytest.mark.django_db
def test_it_shows_every_error_of_every_row_as_text_and_never_a_password(cast, staff):
    weak, fine = "1234", "Kept-secret-pass-2026"
    preview = staff.upload(
        ROSTER_URL,
        roster(
            f"new_one,boss,nobody,{weak}", f"new_two,trainee,supervisor_a,{fine}", f"has space,trainee,nobody,{fine}"
        ),
    )
    page = preview.content.decode()
    assert not offers_confirm(preview)
    errors = re.findall(r"<tr><td>(\d+)행</td><td>[^<]*\((\w+)\)</td><td>", page)
    assert set(errors) == {("2", "role"), ("2", "supervisor"), ("4", "username"), ("4", "supervisor")}
    assert weak not in page and fine not in page
    assert "validation-error-count" not in page  # no badge to hover: the messages are the table
    assert not User.objects.filter(username__in=["new_one", "new_two"]).exists()


@pytest.mark.django_db
def test_a_good_cohort_is_still_created_whole_and_its_preview_hides_the_passwords(cast, staff):
    secret = "Cohort-first-pass-2026"
    preview = staff.upload(
        ROSTER_URL,
        roster("c_sup,supervisor,,", f"c_tr1,trainee,c_sup,{secret}", "c_tr2,trainee,SUPERVISOR_A,", "c_staff,staff,,"),
    )
    assert offers_confirm(preview) and secret not in preview.content.decode()
    assert "사용자 이름 (username)" in preview.content.decode()
    done = staff.confirm(preview)
    assert done.status_code == 302
    made = {u.username: roles_of(u) for u in User.objects.filter(username__startswith="c_")}
    assert made == {
        "c_sup": {Role.SUPERVISOR},
        "c_tr1": {Role.TRAINEE},
        "c_tr2": {Role.TRAINEE},
        "c_staff": {Role.STAFF},
    }
    assert TraineeAssignment.objects.get(trainee__username="c_tr1").supervisor.username == "c_sup"
    assert TraineeAssignment.objects.get(trainee__username="c_tr2").supervisor == cast.supervisor_a
    assert User.objects.get(username="c_tr1").check_password(secret)
    listed = staff.get("/admin/supervision/traineeassignment/")
    assert "가져오기를 마쳤습니다" in listed.content.decode()
