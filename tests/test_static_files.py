"""Issue 39.1: static files are answered by WhiteNoise right after SecurityMiddleware, before the rest of the stack
(the cost of each middleware: benchmarks/middleware_cost.out.txt). WhiteNoise finds the files with Django's finders
here (the suite does not collect static files); in production it serves STATIC_ROOT the same way."""

from django.test import Client, override_settings


@override_settings(WHITENOISE_USE_FINDERS=True, WHITENOISE_AUTOREFRESH=True)
def test_a_static_file_is_answered_before_the_rest_of_the_stack():
    response = Client().get("/static/css/site.css")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/css")
    assert response["X-Content-Type-Options"] == "nosniff"  # SecurityMiddleware, outside WhiteNoise
    # No layer after WhiteNoise saw it: RequestIdMiddleware names every answer of Django's, not this one.
    assert "X-Request-ID" not in response
    assert "X-Request-ID" in Client().get("/api/v1/")
