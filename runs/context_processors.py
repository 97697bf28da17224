from django.utils.functional import SimpleLazyObject

from .permissions import is_operator


def operator(request):
    """`is_operator` for templates (the nav's runs link); evaluated only where a template asks."""
    return {"is_operator": SimpleLazyObject(lambda: is_operator(request.user))}
