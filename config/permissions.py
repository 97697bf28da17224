"""Who may do what, for pages and the API (its own module: DRF imports the default permission classes while it loads)."""

from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
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


# --- who may do what: each rule once, as a decorator for pages and a permission for the API -------------------

def is_staff(user):
    return bool(user and user.is_authenticated and user.is_active and user.is_staff)


def user_passes(rule, message):
    """A page decorator from a rule on the user: the login page for an anonymous visitor, 403 with `message` for a
    user the rule refuses."""
    def decorator(view):
        @wraps(view)
        def wrapped(request, *args, **kwargs):
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            if not rule(request.user):
                raise PermissionDenied(message)
            return view(request, *args, **kwargs)
        return wrapped
    return decorator


def staff_required(message):
    return user_passes(is_staff, message)


class UserRule(permissions.BasePermission):
    """An API permission from a rule on the user (`rule`, `message` on the subclass)."""

    rule = staticmethod(is_staff)
    message = "Only staff may do this."

    def has_permission(self, request, view):
        return self.rule(request.user)
