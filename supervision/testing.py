"""Test helpers shared by the apps' suites (imported by tests only)."""

from __future__ import annotations

from html.parser import HTMLParser


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
