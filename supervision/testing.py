"""Test helpers shared by the apps' suites (imported by tests only; fixtures are in the root conftest.py).

The cast's password, golden lines (CONTRACT §2) and sessions imported through the import service, a log-in,
and a reader for the forms of a page.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

PASSWORD = "test-pass-2026"

# Browser tests drive Debian's Chromium (a browser download by Playwright fails here); the `browser`,
# `http_settings` and `csp_violations` fixtures are in the root conftest.py.
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def browser_marks() -> list:
    """``pytestmark`` of a browser test module."""
    import pytest

    return [
        pytest.mark.browser,
        pytest.mark.skipif(
            not CHROMIUM.exists(), reason="Debian's Chromium is not installed (apt-get install -y chromium)"
        ),
    ]


def browser_log_in(page, base: str, username: str) -> None:
    """Logs in through the log-in page, as a person does."""
    page.goto(f"{base}/accounts/login/")
    page.get_by_label("아이디").fill(username)
    page.get_by_label("비밀번호").fill(PASSWORD)
    page.get_by_role("button", name="로그인").click()


def browser_admin_log_in(page, base: str, username: str) -> None:
    """Logs in through the admin's own log-in page, as a supervisor or staff member does."""
    page.goto(f"{base}/admin/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")


# JavaScript for Playwright: WCAG's contrast ratio between an element's text colour and the first opaque
# background behind it (the element's own, else its ancestors'), as the browser computed them; opacity on the
# way is ignored.
CONTRAST_JS = """(el) => {
  const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
    .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
  let ground = null;
  for (let node = el; node && !ground; node = node.parentElement) {
    const c = rgb(getComputedStyle(node).backgroundColor);
    if (c.length === 3 || c[3] > 0.5) ground = c;
  }
  const [a, b] = [lum(rgb(getComputedStyle(el).color)), lum(ground || [255, 255, 255])];
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}"""


def browser_contrast(locator) -> float:
    """The contrast ratio of the element's text against its background (4.5 is WCAG AA for body text)."""
    return locator.evaluate(CONTRAST_JS)


# Every visible element under the selector with text of its own below 4.5:1, as (ratio, tag.class, text);
# charts are left out (their SVG text draws with fill on the chart's own white ground).
_LOW_CONTRAST_JS = """([contrast, selector]) => {
  const ratio = eval(contrast);
  const low = [];
  for (const el of document.querySelectorAll(selector)) {
    if (el.closest("svg")) continue;
    if (!Array.from(el.childNodes).some((n) => n.nodeType === 3 && n.textContent.trim())) continue;
    const box = el.getBoundingClientRect();
    if (!box.width || !box.height || getComputedStyle(el).visibility === "hidden") continue;
    const r = ratio(el);
    if (r < 4.5) low.push([Math.round(r * 100) / 100, el.tagName + "." + el.className, el.textContent.trim().slice(0, 40)]);
  }
  return low;
}"""


def browser_low_contrast(page, selector: str) -> list:
    """The text on the page (under ``selector``, e.g. "#content *") that falls short of WCAG AA."""
    return page.evaluate(_LOW_CONTRAST_JS, [CONTRAST_JS, selector])


def golden_line(session: str, seq: int, speaker: str = "", **fields) -> dict:
    """One valid golden line; counselor on even seqs, client on odd ones unless ``speaker`` says."""
    speaker = speaker or ("counselor" if seq % 2 == 0 else "client")
    letter = "C" if speaker == "counselor" else "K"
    line = {
        "utterance_id": f"{session}-{letter}-{seq // 2 + 1:03d}",
        "speaker": speaker,
        "stage": "탐색",
        "seq": seq,
        "text": f"합성 발화 {seq}",
        "techniques": ["reflection"] if speaker == "counselor" else [],
        "client_states": ["affect_contact"] if speaker == "client" else [],
        "comments": [],
        "nonverbal": [],
        "source": "test_synthetic",
    }
    line.update(fields)
    return line


def golden_session(session: str, turns: int, **fields) -> list[dict]:
    return [golden_line(session, seq, **fields) for seq in range(turns)]


def write_jsonl(path: Path, lines: list[dict | str]) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for line in lines:
            handle.write((line if isinstance(line, str) else json.dumps(line, ensure_ascii=False)) + "\n")
    return path


def import_lines(lines: list[dict], *, trainee: str | None = None) -> None:
    """Imports golden lines through the import service (as staff do), failing the test on any error."""
    from supervision.importing.services import import_transcripts

    report = import_transcripts(rows=enumerate(lines, start=1), trainee_username=trainee)
    assert report.ok, report.errors[:3]


def import_session(code: str, turns: int, trainee: str | None = None, **fields):
    """A session of ``turns`` golden lines (``fields`` override every line), imported; returns it."""
    from supervision.models import Session

    import_lines(golden_session(code, turns, **fields), trainee=trainee)
    return Session.objects.get(code=code)


def pending_suggestion(turn, text: str = "AI 제안 문구", key: str = "test-key", **fields):
    """An AI-suggested critique not yet accepted, as the nightly job leaves one."""
    from supervision.models import CommentAuthor, CommentKind, SupervisorComment

    return SupervisorComment.objects.create(
        turn=turn,
        kind=CommentKind.CRITIQUE,
        text=text,
        author=CommentAuthor.AI,
        is_suggestion=True,
        suggestion_key=key,
        **fields,
    )


def make_cast():
    """The cast (module docstring of the root conftest.py): the code tables synced with the catalogue, then
    supervisor_a and _b, trainee_a (supervised by supervisor_a) and _b (by supervisor_b), and staff."""
    from types import SimpleNamespace

    from supervision.people.services import portal_user_create_or_update
    from supervision.roles import Role
    from taxonomy.seeding import sync_catalogue

    sync_catalogue()
    people = SimpleNamespace()
    for username, role, supervisor in (
        ("supervisor_a", Role.SUPERVISOR, None),
        ("supervisor_b", Role.SUPERVISOR, None),
        ("trainee_a", Role.TRAINEE, "supervisor_a"),
        ("trainee_b", Role.TRAINEE, "supervisor_b"),
        ("staff", Role.STAFF, None),
    ):
        user = portal_user_create_or_update(
            username=username, role=role, password=PASSWORD, supervisor_username=supervisor
        )
        setattr(people, username, user)
    return people


def log_in(client, user):
    """The test client with the session of ``user`` (a user or a username); the log-in form itself is
    tested in portal/tests."""
    if isinstance(user, str):
        from django.contrib.auth import get_user_model

        user = get_user_model().objects.get(username=user)
    client.force_login(user)
    return client


def database_url_under_test() -> str:
    """The URL of the database the tests run on, for the processes a test starts."""
    from django.db import connection

    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


class _FormReader(HTMLParser):
    """The fields of one ``<form id=…>`` with the values a browser would submit unchanged."""

    def __init__(self, form_id: str) -> None:
        super().__init__(convert_charrefs=True)
        self.form_id = form_id
        self.inside = False
        self.data: dict[str, list[str]] = {}
        self._select: str | None = None
        self._select_first: str | None = None
        self._select_chosen = False
        self._textarea: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self.inside = attrs.get("id") == self.form_id
            return
        if not self.inside:
            return
        name = attrs.get("name")
        if tag == "input" and name and attrs.get("type") not in ("submit", "button", "file"):
            if attrs.get("type") in ("checkbox", "radio") and "checked" not in attrs:
                return
            self.data.setdefault(name, []).append(attrs.get("value", "on" if attrs.get("type") == "checkbox" else ""))
        elif tag == "select" and name:
            self._select, self._select_first, self._select_chosen = name, None, False
        elif tag == "option" and self._select:
            value = attrs.get("value", "")
            if self._select_first is None:
                self._select_first = value
            if "selected" in attrs:
                self.data.setdefault(self._select, []).append(value)
                self._select_chosen = True
        elif tag == "textarea" and name:
            self._textarea, self._text = name, []

    def handle_data(self, data):
        if self._textarea:
            self._text.append(data)

    def handle_endtag(self, tag):
        if tag == "form":
            self.inside = False
        elif tag == "select" and self._select:
            if not self._select_chosen and self._select_first is not None:
                self.data.setdefault(self._select, []).append(self._select_first)
            self._select = None
        elif tag == "textarea" and self._textarea:
            # A browser drops the one newline that follows <textarea>.
            self.data.setdefault(self._textarea, []).append("".join(self._text).removeprefix("\n"))
            self._textarea = None


def form_data(html: str, form_id: str) -> dict[str, list[str] | str]:
    """What submitting the form unchanged would post (Django's test client takes lists for repeats)."""
    reader = _FormReader(form_id)
    reader.feed(html)
    return {name: values[0] if len(values) == 1 else values for name, values in reader.data.items()}
