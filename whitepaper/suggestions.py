"""What a reader probably meant by a vendor, engine, family, document or methodology the catalogue does not
know: the slug in another case (`MySQL`), or the thing's name, English or as the documents print it (`通用型`
for `general`). One rule for every API parameter naming the vocabulary (whitepaper.api.params.check_params)."""

from django.db.models import Q

from .models import Document, Engine, InstanceFamily, Methodology, Vendor

# parameter -> (model, the fields besides the slug a reader may write instead, matched ignoring case)
NAMED_BY = {
    "vendor": (Vendor, ("name", "name_zh")),
    "engine": (Engine, ("name",)),
    "family": (InstanceFamily, ("name", "name_zh")),
    "document": (Document, ()),
    "methodology": (Methodology, ("name",)),
}
MAX_SUGGESTIONS = 3


def meant(parameter, value):
    """The slugs `value` probably names (at most MAX_SUGGESTIONS, sorted); [] when none or not a vocabulary."""
    if parameter not in NAMED_BY or not isinstance(value, str):
        return []
    value = value.strip()
    if not value or "\x00" in value or len(value) > 200:  # PostgreSQL refuses NUL in text
        return []
    model, names = NAMED_BY[parameter]
    match = Q(slug__iexact=value)
    for name in names:
        match |= Q(**{f"{name}__iexact": value})
    return sorted(set(model.objects.filter(match).values_list("slug", flat=True)))[:MAX_SUGGESTIONS]


def did_you_mean(parameter, value):
    """"Did you mean 'mysql'?" for an unknown value, or '' when nothing comes close."""
    slugs = meant(parameter, value)
    return f"Did you mean {' or '.join(repr(s) for s in slugs)}?" if slugs else ""
