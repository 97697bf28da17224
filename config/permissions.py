"""API-wide permissions (their own module: DRF imports the default permission classes while it loads)."""

from rest_framework import exceptions, permissions


class MethodIsAllowed(permissions.BasePermission):
    """The first permission of every API view: a method the resource does not have is a 405 with `Allow`,
    whoever asks. (DRF checks permissions before it looks for the handler, so an anonymous POST to a
    read-only list was a 403, and a 401 on the runs API.)"""

    def has_permission(self, request, view):
        method = request.method.lower()
        if method not in view.http_method_names or getattr(view, method, None) is None:
            raise exceptions.MethodNotAllowed(request.method)
        return True
