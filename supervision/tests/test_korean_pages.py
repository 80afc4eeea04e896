"""Korean all the way (issue 33): every admin and feedback page a role reaches, walked link by link as the
supervisor, the staff importer and the trainee, shows no English word with a capital letter and no raw
taxonomy code in its visible text, apart from the allow-list below. Codes are fine where the page shows
them as codes (``<code>`` or ``class="code"``, e.g. a chip's code beside its Korean name)."""

from __future__ import annotations

import re
from collections import Counter
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import pytest

from supervision.demo import load_demo
from supervision.tags.catalogue import TAG_NAMES
from taxonomy import catalogue

pytestmark = pytest.mark.django_db

# Names and abbreviations that are words of their own in Korean pages.
ALLOWED_WORDS = {
    "AI", "API", "CSV", "XLSX", "JSONL", "JSON", "ID", "OpenAPI", "Swagger", "Redis", "UTF", "BOM", "Excel",
    "Cohen", "Krippendorff", "Fleiss", "F1", "N", "K", "C", "Celery", "PostgreSQL", "SQLite", "Django", "RQ", "MITI",
}  # fmt: skip
CODES = (
    set(catalogue.TECHNIQUE_CODES)
    | set(catalogue.CLIENT_STATE_CODES)
    | {c.code for c in catalogue.CATEGORIES}
    | {code for code in TAG_NAMES}
    | {"minor", "moderate", "major", "techniques", "client_states", "adjudication"}
)
ACTS = set(catalogue.DIALOG_ACT_CODES) - {"null", "help", "repeat"}  # words people also write in prose
CAPITAL = re.compile(r"(?<![A-Za-z0-9_.:/-])[A-Za-z]*[A-Z][A-Za-z0-9]*(?![A-Za-z0-9_.:/-])")
WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
SKIP_TAGS = {"script", "style", "code", "kbd", "samp", "pre", "noscript", "template", "svg"}
SKIP_PATHS = ("logout", "/delete/", "password", "export", "template", "jsi18n", "autocomplete", "/golden/", "/r/")
SKIP_PATHS += ("/schema", "/docs", "download", ".css", ".js", ".svg", ".png", "/api/", "/read/", "/replies/")
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class VisibleText(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[bool] = []  # per open element: whether its text is skipped
        self.text: list[str] = []
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])
        classes = (attrs.get("class") or "").split()
        skipped = (
            (self.stack and self.stack[-1])
            or tag in SKIP_TAGS
            or "code" in classes
            or "hidden" in attrs
            or "visually-hidden" in classes
        )
        if tag == "input" and attrs.get("type") in ("submit", "button") and not skipped:
            self.text.append(attrs.get("value") or "")
        if tag in ("input", "textarea") and attrs.get("placeholder") and not skipped:
            self.text.append(attrs["placeholder"])
        if tag not in VOID:
            self.stack.append(bool(skipped))

    def handle_endtag(self, tag):
        if tag not in VOID and self.stack:
            self.stack.pop()

    def handle_data(self, data):
        if not (self.stack and self.stack[-1]) and data.strip():
            self.text.append(data.strip())


# A code in parentheses right after its Korean name ("공감 (empathy)", "관계 (RELATIONAL)") is the code shown
# beside the name, as in a chip.
BESIDE_KOREAN = re.compile(r"([가-힣)'’\"”])\s*\(\s*[A-Za-z_]+\s*\)")


def problems_in(text: str) -> list[str]:
    text = BESIDE_KOREAN.sub(r"\1", text)
    found = [w for w in CAPITAL.findall(text) if w not in ALLOWED_WORDS]
    found += [w for w in WORD.findall(text) if w in CODES or w in ACTS]
    return found


def walk(client, starts: list[str], limit: int = 400) -> tuple[dict[str, list[str]], int]:
    seen: Counter = Counter()
    visited: set[str] = set()
    queue = list(starts)
    out: dict[str, list[str]] = {}
    pages = 0
    while queue and len(visited) < limit:
        url = queue.pop(0)
        key = re.sub(r"\d+", "N", urlsplit(url).path)
        if seen[key] == 3 or url in visited:  # up to three pages of a kind (three sessions, three comments)
            continue
        seen[key] += 1
        visited.add(url)
        response = client.get(url)
        if response.status_code >= 500:
            out[url] = [f"HTTP {response.status_code}"]
            continue
        if response.status_code != 200 or "text/html" not in response.get("Content-Type", ""):
            continue
        pages += 1
        parser = VisibleText()
        parser.feed(response.content.decode())
        found = problems_in("\n".join(parser.text))
        if found:
            out[url] = sorted(set(found))
        for href in parser.links:
            target = urljoin(url, href)
            parts = urlsplit(target)
            if parts.netloc or not parts.path.startswith(("/admin/", "/feedback/")):
                continue
            if any(skip in parts.path for skip in SKIP_PATHS):
                continue
            queue.append(parts.path + (f"?{parts.query}" if parts.query else ""))
    return out, pages


@pytest.mark.parametrize(("username", "at_least"), [("supervisor_kim", 40), ("staff_lee", 40), ("trainee_a", 4)])
def test_every_page_a_role_reaches_is_in_korean(client, taxonomy_tables, username, at_least):
    load_demo()
    from django.contrib.auth import get_user_model

    client.force_login(get_user_model().objects.get(username=username))
    found, pages = walk(client, ["/admin/", "/feedback/", "/feedback/tags/"])
    assert pages >= at_least  # the walk really went through the pages
    report = "\n".join(f"{url}: {', '.join(words)}" for url, words in sorted(found.items()))
    assert not found, f"English or raw codes on {len(found)} pages:\n{report}"
