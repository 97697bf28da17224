"""Template filters for the catalogue's own text in the reader's language (rules: whitepaper.display)."""

import re

from django import template
from django.utils.html import conditional_escape, escape, format_html
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _

from whitepaper import display
from whitepaper.choices import NOT_STATED_MARK, or_not_stated

register = template.Library()

register.filter("vendor_name", display.vendor_name)
register.filter("or_not_stated", or_not_stated)  # {{ x|floatformat:2|or_not_stated }}: format first, then the mark
register.simple_tag(lambda: NOT_STATED_MARK, name="not_stated")  # {% not_stated %} where a template tests itself
register.filter("document_title", display.document_title)
register.filter("inferred_sources", display.inferred_sources)  # {field: where an inferred set-up value comes from}


# A phone's card (site.css .cards-narrow) sets three cells side by side, about 11 characters each at 390 px: a cell
# holding a longer unbroken token (15,000,000,000; rds.ppas.st.h43; primary/standby) takes the card's width instead
# of breaking the token mid-way (issue 49.12).
CARD_TOKEN_CHARS = 10


@register.filter
def card_wide(value):
    return any(len(token) > CARD_TOKEN_CHARS for token in str(value or "").split())


@register.filter
def get(mapping, key):
    return (mapping or {}).get(key, "")
register.filter("family_name", display.family_html)
register.filter("methodology_name", display.methodology_name)
register.filter("table_label", display.table_label_html)
register.filter("table_label_text", display.table_label)
register.filter("section_title", display.section_html)
register.filter("heading_title", display.heading_html)
register.filter("heading_text", display.heading_text)
register.filter("section_text", display.section_title)
register.filter("edition_name", display.edition_name)
register.filter("docdate", display.date)
register.filter("memory_ratio", display.memory_ratio_html)  # the document's, or derived and said so
register.filter("revised_from", display.revised_from)  # "TPS revised from 10929.30 in 2023, -19.1 %"


@register.simple_tag
def options(choices, chosen=None):
    """A filter menu's <option>s from (value, label) pairs, `chosen` selected. One call rather than a template loop
    (and no format_html per option): the document menu lists every document of the catalogue, hundreds at scale,
    on every explorer request."""
    return mark_safe("".join(
        f'<option value="{conditional_escape(value)}"{" selected" if value == chosen else ""}>{conditional_escape(label)}</option>'
        for value, label in choices))


@register.filter
def hot_rows_label(result):
    """"Hot data 1亿" (Chinese pages) / "Hot data 100,000,000"."""
    return f"{display.METRICS_BY_NAME['hot_rows'].label} {display.metric_shown(result, 'hot_rows')}"


@register.filter
def metric_shown(result, name):
    return display.metric_shown(result, name)


PRINTED_RUN = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef《》“”]+(?:[ \w.:=()（）-]*[\u3400-\u9fff》）]+)*")


@register.filter
def quote_printed(text):
    """English notes quote the document's Chinese (云硬盘, 须知 ...): each quotation is marked
    lang="zh-Hans", like the printed labels."""
    html = PRINTED_RUN.sub(lambda m: f'<span lang="zh-Hans">{m.group(0)}</span>', escape("" if text is None else str(text)))
    return mark_safe(code_spans(html))


def code_spans(html):
    """`disk`, `max_connections`: values and parameter names, shown as code."""
    return re.sub(r"`([^`<>]+)`", r"<code>\1</code>", html)


@register.filter
def notes_text(text):
    """Notes written in the page's language, with `code` spans."""
    return mark_safe(code_spans(escape(text or "")))


@register.filter
def transcription_note(text):
    """A transcriber's note (written in English, quoting the document): in Chinese pages it says so
    before the English text, so the reader knows it is a note about the source, not the interface."""
    if not text:
        return ""
    if display.chinese():
        return format_html('<span class="note-language" lang="zh-Hans">{}</span> {}',
                           _("Transcription note (English):"), quote_printed(text))
    return quote_printed(text)


@register.filter
def methodology_text(methodology, field):
    """A methodology's workload / client / description: the Chinese text on Chinese pages where there
    is one, else the English transcription (quotations of the document marked lang="zh-Hans")."""
    text, in_chinese = display.methodology_text(methodology, field)
    if in_chinese:
        return notes_text(text)
    if field == "description":
        return format_html('<span lang="en">{}</span>', transcription_note(text))
    return format_html('<span lang="en">{}</span>', quote_printed(text))


@register.filter
def methodology_parameters(methodology):
    """(label, value html) per parameter: Chinese values with `code` spans, English ones quoting the document."""
    return [(label, notes_text(value) if in_chinese else quote_printed(value))
            for label, value, in_chinese in display.methodology_parameters(methodology)]
