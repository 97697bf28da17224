"""Template filters for the catalogue's own text in the reader's language (rules: whitepaper.display)."""

from django import template

from whitepaper import display

register = template.Library()

register.filter("vendor_name", display.vendor_name)
register.filter("document_title", display.document_title)
register.filter("family_name", display.family_html)
register.filter("methodology_name", display.methodology_name)
register.filter("table_label", display.table_label_html)
register.filter("table_label_text", display.table_label)
register.filter("section_title", display.section_html)
register.filter("edition_name", display.edition_name)
register.filter("docdate", display.date)


@register.filter
def metric_shown(result, name):
    return display.metric_shown(result, name)
