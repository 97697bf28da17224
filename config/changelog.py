"""The API changelog (docs/API-CHANGELOG.md) served at /api/v1/changelog/ as Markdown, and linked from the
schema (`externalDocs`, `info.description`): consumers read what changed where they read the API."""

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import THROTTLED, ContentCaching

CHANGELOG = settings.BASE_DIR / "docs" / "API-CHANGELOG.md"


class MarkdownRenderer(BaseRenderer):
    media_type = "text/markdown"
    format = "md"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return data.encode() if isinstance(data, str) else data


class ChangelogView(ContentCaching, APIView):
    renderer_classes = [MarkdownRenderer]

    def perform_content_negotiation(self, request, force=False):
        return MarkdownRenderer(), MarkdownRenderer.media_type  # Markdown whatever Accept says

    def handle_exception(self, exc):
        self.request.accepted_renderer, self.request.accepted_media_type = JSONRenderer(), "application/json"
        return super().handle_exception(exc)

    @extend_schema(summary="The API changelog (Markdown): what changed in each schema version, the deprecation "
                           "policy and what is deprecated", responses={
                               (200, "text/markdown"): OpenApiResponse(OpenApiTypes.STR, description=(
                                   "docs/API-CHANGELOG.md: one section per schema version, newest first.")),
                               (429, "application/json"): THROTTLED})
    def get(self, request):
        return Response(CHANGELOG.read_text(encoding="utf-8"))
