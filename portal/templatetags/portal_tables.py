from django import template
from django.utils.html import conditional_escape
from django.utils.safestring import mark_safe

from supervision.rules import is_whole_line_problem

register = template.Library()

# diff-match-patch's ``diff_prettyHtml`` (django-import-export's preview cells) colours changes with style
# attributes, which the Content-Security-Policy blocks (no inline style anywhere): classes instead, coloured
# by portal_admin.css.
_DIFF_STYLES = {
    '<ins style="background:#e6ffe6;">': '<ins class="diff-added">',
    '<del style="background:#ffe6e6;">': '<del class="diff-removed">',
}


@register.filter
def column_label(column: str, labels: dict) -> str:
    """A spreadsheet column as the import screens name it: the Korean name, then the header the file carries."""
    label = (labels or {}).get(column)
    return f"{label} ({column})" if label else column


@register.filter
def diff_cell(html) -> str:
    """A preview cell's diff with its colours as classes. The cell is the library's escaped HTML (marked
    safe); anything else is escaped here first."""
    text = str(conditional_escape(html))
    for styled, classed in _DIFF_STYLES.items():
        text = text.replace(styled, classed)
    return mark_safe(text)  # escaped above, or by diff_prettyHtml


@register.filter
def whole_line(message: str) -> bool:
    """Whether an upload's error concerns a JSONL line as a whole (shown against 「줄 전체」, not a field)."""
    return is_whole_line_problem(str(message))


@register.filter
def code_breaks(code: str) -> str:
    """A label code that may wrap after its underscores only ("suicidal_<wbr>ideation_<wbr>admit"), not inside
    a word ("suicida/l_ideat/ion"), in a narrow column."""
    return mark_safe(str(conditional_escape(code)).replace("_", "_<wbr>"))
