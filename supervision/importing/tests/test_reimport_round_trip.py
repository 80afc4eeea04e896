"""Re-importing the portal's own csv/xlsx export on the same database changes nothing (issue 33, item 1):
comments are recognised by kind and content and kept as they are (ids, structured fields, author, byline);
the structured critique fields travel in the spreadsheet's own columns."""

import csv
import io

import pytest
from django.core.management import call_command

from supervision.exporting import golden_lines
from supervision.importing.services import import_file
from supervision.models import Session, SupervisorComment, Turn
from supervision.testing import golden_session, write_jsonl

pytestmark = pytest.mark.django_db


def _load(cast, tmp_path):
    lines = golden_session("RT1", 6, trainee="trainee_a", held_on="2026-11-03")
    lines[0]["comments"] = [
        {"kind": "rationale", "text": "정서를 정확히 되돌려 줌", "author": "supervisor"},
        {
            "kind": "critique",
            "text": "질문이 조금 빨랐음",
            "author": "supervisor",
            "dimension": "속도",
            "expected": "reflection",
            "actual": "open_question",
            "severity": "moderate",
        },
        {"kind": "critique", "text": "요약이 없었음", "author": "ai", "severity": "minor"},
    ]
    lines[2]["comments"] = [{"kind": "critique", "text": "공감이 빠짐", "author": "supervisor", "severity": "major"}]
    report = import_file(write_jsonl(tmp_path / "rt.jsonl", lines))
    assert report.errors == []
    # The supervisor's byline, as the admin would leave it.
    SupervisorComment.objects.filter(author="supervisor").update(written_by=cast.supervisor_a)


def _comments():
    return sorted(
        SupervisorComment.objects.values_list(
            "id", "turn__utterance_id", "kind", "text", "author", "intent_deviation", "written_by__username"
        )
    )


@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_it_gives_the_sessions_back_unchanged_when_its_export_is_imported_again(cast, tmp_path, fmt):
    _load(cast, tmp_path)
    before = _comments()
    turns_before = list(Turn.objects.order_by("id").values_list("id", "text"))
    path = tmp_path / f"out.{fmt}"
    call_command("export_golden", "--format", fmt, "--output", str(path))

    report = import_file(path, created_by=cast.staff)

    assert report.errors == []
    assert (report.created, report.updated, report.deleted) == (0, 0, 0)
    assert _comments() == before
    assert list(Turn.objects.order_by("id").values_list("id", "text")) == turns_before
    assert all(entry["comments_added"] == 0 for entry in report.previews)


@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_it_keeps_the_structured_critique_fields_through_a_spreadsheet(cast, tmp_path, fmt):
    _load(cast, tmp_path)
    golden = list(golden_lines(Session.objects.order_by("code")))
    path = tmp_path / f"out.{fmt}"
    call_command("export_golden", "--format", fmt, "--output", str(path))

    Session.objects.all().delete()
    report = import_file(path, created_by=cast.staff)

    assert report.errors == []
    assert list(golden_lines(Session.objects.order_by("code"))) == golden


def test_it_adds_a_new_critique_line_once_and_says_so_in_the_preview(cast, tmp_path):
    _load(cast, tmp_path)
    path = tmp_path / "out.csv"
    call_command("export_golden", "--format", "csv", "--output", str(path))
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8-sig"))))
    critique = rows[0].index("critique")
    for row in rows:
        if row[critique] == "공감이 빠짐":
            row[critique] += "\n새 논평 한 줄"
    with path.open("w", encoding="utf-8-sig", newline="") as handle:
        csv.writer(handle).writerows(rows)

    preview = import_file(path, created_by=cast.staff, dry_run=True)
    assert preview.errors == []
    assert [entry["comments_added"] for entry in preview.previews] == [1]
    assert preview.updated == 1

    import_file(path, created_by=cast.staff)
    import_file(path, created_by=cast.staff)
    added = SupervisorComment.objects.filter(text="새 논평 한 줄")
    assert [(c.kind, c.author, c.written_by) for c in added] == [("critique", "supervisor", cast.staff)]
    assert SupervisorComment.objects.filter(text="공감이 빠짐").count() == 1


def test_the_admin_preview_of_a_re_imported_export_says_nothing_changes(client, cast, tmp_path):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    from supervision.testing import PASSWORD

    _load(cast, tmp_path)
    path = tmp_path / "out.xlsx"
    call_command("export_golden", "--format", "xlsx", "--output", str(path))
    assert client.login(username="staff", password=PASSWORD)
    upload = SimpleUploadedFile("out.xlsx", path.read_bytes())
    response = client.post(reverse("admin:supervision_session_import"), {"file": upload})

    html = client.get(response["Location"]).content.decode()
    sessions = html.split('id="import-sessions"', 1)[1].split("</table>", 1)[0]
    assert "변경 없음" in sessions
    assert 'id="count-updated">0<' in html
