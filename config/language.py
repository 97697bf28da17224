"""The interface language: English or Chinese (LANGUAGES), for every page but the API.

Chosen, in order, from the URL (`?lang=zh-hans`: shareable, and remembered in the language cookie),
the cookie (the last choice), then `Accept-Language`. Existing URLs keep working unchanged (no path
prefix). The API under /api/ is always English, whatever the request asks for.

`LanguageParamMiddleware` (before the page cache) takes `lang` out of the query that views and forms
see and sets the cookie; `LocaleMiddleware` (Django's, extended) activates the language; the
`language_links` context processor gives each page its switch and its hreflang twins."""

from urllib.parse import parse_qsl, urlencode

from django.conf import settings
from django.middleware.locale import LocaleMiddleware as DjangoLocaleMiddleware
from django.utils import translation

LANG_PARAM = "lang"
ENGLISH_ONLY = ("/api/",)


def _supported(code):
    try:
        return translation.get_supported_language_variant(code or "")
    except LookupError:
        return None


def url_language(request):
    """The language the URL names (`?lang=`), or None. Read from the raw query string, so it works
    before and after `LanguageParamMiddleware` took the parameter out of request.GET."""
    if not hasattr(request, "_url_language"):
        values = [v for k, v in parse_qsl(request.META.get("QUERY_STRING", ""), keep_blank_values=True) if k == LANG_PARAM]
        request._url_language = _supported(values[-1]) if values else None
    return request._url_language


def request_language(request):
    """The language a page is rendered in: URL, then cookie, then Accept-Language; English for the API."""
    if request.path_info.startswith(ENGLISH_ONLY):
        return settings.LANGUAGE_CODE
    return url_language(request) or translation.get_language_from_request(request)


class LanguageParamMiddleware:
    """Takes `lang` out of request.GET (views, filters and forms never see it) and remembers a
    language named in the URL in the language cookie. Placed before the page cache, so a page
    served from memory sets the cookie too."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        chosen = None
        if not request.path_info.startswith(ENGLISH_ONLY) and LANG_PARAM in request.GET:
            chosen = url_language(request)
            query = request.GET.copy()
            query.pop(LANG_PARAM)
            query._mutable = False
            request.GET = query
        response = self.get_response(request)
        if chosen and request.COOKIES.get(settings.LANGUAGE_COOKIE_NAME) != chosen:
            response.set_cookie(settings.LANGUAGE_COOKIE_NAME, chosen, max_age=settings.LANGUAGE_COOKIE_AGE, samesite="Lax",
                                secure=settings.SESSION_COOKIE_SECURE, path=settings.LANGUAGE_COOKIE_PATH)
        return response


class LocaleMiddleware(DjangoLocaleMiddleware):
    """Django's LocaleMiddleware (Accept-Language, cookie, Vary, Content-Language), with the URL's
    `?lang=` first and the API always in English."""

    def process_request(self, request):
        language = request_language(request)
        translation.activate(language)
        request.LANGUAGE_CODE = translation.get_language()

    def process_response(self, request, response):
        if request.path_info.startswith(ENGLISH_ONLY):
            # English whatever the request says: no `Vary: Accept-Language` (caches would keep a copy per
            # language for one answer).
            response.headers.setdefault("Content-Language", settings.LANGUAGE_CODE)
            return response
        return super().process_response(request, response)


def switch_url(request, code):
    """This page in another language: same path, same query, `lang` set."""
    pairs = [(k, v) for k, v in parse_qsl(request.META.get("QUERY_STRING", ""), keep_blank_values=True)
             if k != LANG_PARAM]
    return f"{request.path}?{urlencode(pairs + [(LANG_PARAM, code)])}"


def language_links(request):
    """Context: the language switch and hreflang alternates of the current page."""
    current = translation.get_language() or settings.LANGUAGE_CODE
    links = []
    for code, name in settings.LANGUAGES:
        links.append({"code": code, "name": name, "url": switch_url(request, code), "current": code == current,
                      "hreflang": "zh-Hans" if code == "zh-hans" else code})
    pairs = [(k, v) for k, v in parse_qsl(request.META.get("QUERY_STRING", ""), keep_blank_values=True)
             if k != LANG_PARAM]
    default_url = request.path + (f"?{urlencode(pairs)}" if pairs else "")
    return {"language_links": links, "language_default_url": default_url, "chinese_page": current.startswith("zh")}

