from django import template

register = template.Library()


@register.filter
def column_label(column: str, labels: dict) -> str:
    """A spreadsheet column as the import screens name it: the Korean name, then the header the file carries."""
    label = (labels or {}).get(column)
    return f"{label} ({column})" if label else column
