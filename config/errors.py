"""Friendly error pages in development too. In production (DEBUG off) Django's own handlers render
templates/404.html and templates/500.html; with DEBUG on it answers with its technical pages (the URL
patterns, a traceback), which a customer trying the dashboard should not see. This middleware puts
the same friendly pages in their place for the HTML pages (the API keeps its JSON errors, the admin
its own); the traceback is still logged to the console by Django."""

from django.conf import settings
from django.template import loader


def replace_body(response, content):
    """Give an answer a new body after an inner middleware (CommonMiddleware) declared the old one's length: the
    length declared is the new body's, and an encoding that described the old bytes is dropped. A stale
    Content-Length makes clients read past the body, or stop short of it ("IncompleteRead")."""
    response.content = content
    if response.has_header("Content-Length"):
        response["Content-Length"] = str(len(response.content))
    del response["Content-Encoding"]


class FriendlyErrorPagesMiddleware:
    SKIP = ("/api/", "/admin/", "/static/")

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if (settings.DEBUG and response.status_code in (404, 500)
                and not request.path_info.startswith(self.SKIP)
                and response.get("Content-Type", "").startswith("text/html")):
            if response.status_code == 404:
                content = loader.render_to_string("404.html", request=request)
            else:
                content = loader.get_template("500.html").render()
            replace_body(response, content)
        return response
