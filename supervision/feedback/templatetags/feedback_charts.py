"""Template access to the charts and the shared palette (``supervision.presentation``)."""

import re

from django import template
from django.urls import reverse
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import mark_safe

from supervision import presentation
from supervision.feedback import charts

register = template.Library()


def _wide_and_compact(wide: str, compact: str):
    return mark_safe(charts.wide_and_compact(wide, compact))


# The chart functions escape every piece of text they place, so their markup is safe as a whole.
@register.simple_tag
def gauge_chart(snapshot):
    snapshot = snapshot or {}
    # A supervisor's dashboard shows one chart per trainee; each SVG needs its own title/desc ids.
    ident = f"gauge-{snapshot.get('trainee', 0)}-{snapshot.get('session') or 0}"
    return _wide_and_compact(
        charts.gauge_svg(snapshot, ident=ident), charts.gauge_svg(snapshot, ident=f"{ident}-c", compact=True)
    )


@register.simple_tag
def trend_chart(snapshots):
    return _wide_and_compact(charts.trend_svg(snapshots or []), charts.trend_svg(snapshots or [], compact=True))


@register.simple_tag
def trajectory_chart(trace, risk_threshold, number=1):
    # One page may show several windows; each SVG needs its own title/desc ids.
    return _wide_and_compact(
        charts.trajectory_svg(trace or [], risk_threshold, ident=f"trajectory-{number}"),
        charts.trajectory_svg(trace or [], risk_threshold, ident=f"trajectory-{number}-c", compact=True),
    )


@register.simple_tag
def session_trajectory_chart(audits):
    """One chart for a session: the windows' traces merged, the windows to look at again shaded."""
    from supervision.trajectory.display import trainee_summary

    audits = list(audits or [])
    threshold = audits[0].get("risk_threshold", 0.0) if audits else 0.0
    marked = [
        {"first_seq": a["first_seq"], "last_seq": a["last_seq"], "title": trainee_summary(a)}
        for a in audits
        if a.get("label") == "harmful"
    ]
    trace = charts.merged_trace(audits)
    return _wide_and_compact(
        charts.trajectory_svg(trace, threshold, ident="trajectory", marked=marked, count_from_one=True),
        charts.trajectory_svg(trace, threshold, ident="trajectory-c", marked=marked, compact=True, count_from_one=True),
    )


@register.filter
def window_span(audit):
    from supervision.trajectory.display import window_span as span

    return span(audit)


@register.filter
def window_story(audit):
    from supervision.trajectory.display import window_story as story

    return story(audit)


@register.simple_tag
def stage_strip(stages):
    stages = list(stages or [])
    return _wide_and_compact(charts.stage_strip_svg(stages), charts.stage_strip_svg(stages, compact=True))


def palette_stylesheet() -> str:
    """Chip and severity classes built from the one palette (served at /palette.css)."""
    rules = []
    for code, swatch in presentation.CATEGORY_SWATCH.items():
        rules.append(
            f".chip.cat-{code}{{background:{swatch.background};color:{swatch.text};border-color:{swatch.stroke}}}"
        )
    state, critical = presentation.CLIENT_STATE_SWATCH, presentation.SAFETY_CRITICAL_SWATCH
    rules.append(f".chip.state{{background:{state.background};color:{state.text};border-color:{state.stroke}}}")
    rules.append(
        f".chip.state.critical{{background:{critical.background};color:{critical.text};border-color:{critical.stroke}}}"
    )
    for code, swatch in presentation.SEVERITY_SWATCH.items():
        rules.append(
            f".comment.sev-{code}{{border-left-color:{swatch.stroke}}}"
            f".sev-badge.sev-{code}{{background:{swatch.background};color:{swatch.text};border-color:{swatch.stroke}}}"
        )
    return "".join(rules)


@register.simple_tag
def palette_css():
    """A link to the palette's classes; a stylesheet of its own, not a <style> block, so that the
    Content-Security-Policy needs no 'unsafe-inline' in style-src."""
    return format_html('<link rel="stylesheet" href="{}">', reverse("palette-css"))


@register.filter
def severity_ko(code):
    return presentation.SEVERITY_KO.get(code or "", "")


@register.filter
def technique_ko(code):
    """Expected/actual may name a technique code or be free text; codes are shown with their Korean name."""
    if code in presentation.TECHNIQUE_KO:
        return f"{presentation.TECHNIQUE_KO[code]} ({code})"
    return code


@register.filter
def tag_status_ko(status):
    return presentation.TAG_STATUS_KO.get(status or "", status)


@register.filter
def supervisor_explanation(text):
    from supervision.trajectory.display import supervisor_explanation as explain

    return explain(text or "")


@register.filter
def explanation_after_verdict(text):
    """``supervisor_explanation`` without the verdict and score, where the page shows them beside it."""
    from supervision.trajectory.display import supervisor_explanation as explain

    return explain(text or "", verdict=False)


@register.filter
def audit_label_ko(label):
    from supervision.trajectory.display import LABEL_KO

    return LABEL_KO.get(label, label)


# A percentage and the particle after it ("0%로", "12.5%보다"): a line may break between "%" and Hangul, and
# did, leaving "로" alone at the start of the next line on a phone.
_PERCENT_WORD = re.compile(r"\d+(?:\.\d+)?%[가-힣]*")


@register.filter
def percent_words_whole(text):
    """``text``, escaped, with each percentage and its particle kept on one line (``.nowrap``); for a
    comment's text, before ``linebreaksbr`` (which leaves safe text as it is)."""
    escaped = conditional_escape(text or "")
    return mark_safe(_PERCENT_WORD.sub(lambda m: f'<span class="nowrap">{m.group(0)}</span>', escaped))
