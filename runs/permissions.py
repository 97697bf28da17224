"""Who may see and change targets, runs and schedules: each rule once, with its page decorator and its API
permission (config/permissions.py makes both from a rule)."""

from django.core.exceptions import PermissionDenied
from django.utils.translation import gettext_lazy
from rest_framework import permissions

from config.permissions import UserRule, is_staff, user_passes

OPERATORS_GROUP = "benchmark operators"


def is_operator(user):
    """Staff, or members of the 'benchmark operators' group, may see targets and runs and launch runs."""
    if not user.is_authenticated or not user.is_active:
        return False
    return user.is_staff or user.groups.filter(name=OPERATORS_GROUP).exists()


def may_change_run(user, run):
    """Staff may cancel, publish or clean up after any run; an operator only the runs they asked for."""
    return is_staff(user) or run.requested_by_id == user.pk


def check_may_change_run(user, run, message):
    """The run-level rule where a view holds the run: PermissionDenied with `message` (a 403 on a page and in the API)."""
    if not may_change_run(user, run):
        raise PermissionDenied(message)


def may_change_campaign(user, campaign):
    """As for a run: staff may pause, resume or cancel any campaign, an operator only the campaigns they launched."""
    return is_staff(user) or campaign.created_by_id == user.pk


def check_may_change_campaign(user, campaign, message):
    if not may_change_campaign(user, campaign):
        raise PermissionDenied(message)


def may_edit_profile(user, profile):
    """Operators create and edit benchmark profiles where they launch runs; a profile that follows a published
    methodology (profile.methodology: a whitepaper's numbers, what its rows were measured with) only staff change or
    delete. An operator copies it to a new profile instead, so the published methodology keeps meaning one thing."""
    return is_operator(user) and (profile is None or profile.methodology_id is None or is_staff(user))


PROFILE_IS_METHODOLOGY = gettext_lazy("This profile follows a published methodology: only staff change or delete it. "
                                      "Copy it to a new profile to change its numbers.")


operator_required = user_passes(is_operator, gettext_lazy("Targets and runs are for staff and benchmark operators."))


class IsOperator(UserRule):
    """Staff or 'benchmark operators', by session or token; everyone else 403 (401 without credentials)."""

    rule = staticmethod(is_operator)
    message = "Runs and targets are for staff and benchmark operators."


class MayEditProfile(permissions.BasePermission):
    """After IsOperator: a profile that follows a published methodology only staff change or delete (may_edit_profile)."""

    message = PROFILE_IS_METHODOLOGY

    def has_object_permission(self, request, view, profile):
        return request.method in ("GET", "HEAD", "OPTIONS") or may_edit_profile(request.user, profile)


class IsStaffToWrite(IsOperator):
    """Operators read; only staff create, change, pause or delete (schedules, as on the pages)."""

    def has_permission(self, request, view):
        if request.method in ("GET", "HEAD", "OPTIONS"):
            self.message = "Schedules are for staff and benchmark operators (reading); only staff change them."
            return super().has_permission(request, view)
        self.message = "Only staff can create, change, pause or delete schedules."
        return is_staff(request.user)
