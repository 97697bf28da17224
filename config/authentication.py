"""API tokens: `Authorization: Bearer <key>` (what generated clients send by default) and `Authorization:
Token <key>` (DRF's word) are the same token. A 401 challenges with both schemes, so a client told "not
authenticated" also learns what it may send."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.authentication import TokenAuthentication, get_authorization_header

SCHEMES = ("Bearer", "Token")


class BearerOrTokenAuthentication(TokenAuthentication):
    def authenticate(self, request):
        words = get_authorization_header(request).split()
        if not words:
            return None
        for scheme in SCHEMES:
            if words[0].lower() == scheme.lower().encode():
                self.keyword = scheme  # one instance per request: DRF's parsing below reads it
                return super().authenticate(request)
        return None

    def authenticate_header(self, request):
        return ", ".join(f'{scheme} realm="api"' for scheme in SCHEMES)


class BearerOrTokenScheme(OpenApiAuthenticationExtension):
    """Two security schemes in the schema, each enough on its own (alternatives, not one requirement)."""

    target_class = BearerOrTokenAuthentication
    name = ["bearerAuth", "tokenAuth"]

    def get_security_definition(self, auto_schema):
        return [
            {"type": "http", "scheme": "bearer",
             "description": "`Authorization: Bearer <key>`: an API token (the same key as tokenAuth's)."},
            {"type": "apiKey", "in": "header", "name": "Authorization",
             "description": "`Authorization: Token <key>`: an API token (the same key as bearerAuth's)."},
        ]

    def get_security_requirement(self, auto_schema):
        return [{name: []} for name in self.name]
