"""gunicorn's settings for the dashboard (`gunicorn -c python:config.gunicorn_conf config.wsgi:application`:
scripts/dashboard.sh, the Dockerfile and docker-compose.yml).

Request line: gunicorn's default limit (4,094 bytes) refused filters a consumer builds in earnest (six
compare selections, each a URL-encoded series, or a few dozen repeated values); 8,190 is gunicorn's
largest bounded limit. Past it, and for every other request gunicorn refuses before Django sees it
(a malformed request line, too many or too large headers), the answer is JSON in the API's one error
shape instead of gunicorn's HTML page: a client of /api/ reads every answer as JSON."""

import json

from gunicorn import util

limit_request_line = 8190

CODES = {400: "bad_request", 403: "permission_denied", 414: "request_line_too_long", 417: "expectation_failed",
         431: "request_headers_too_large", 500: "error", 501: "not_implemented"}


def write_json_error(sock, status_int, reason, mesg):
    body = json.dumps({"detail": f"{reason}: {mesg}" if mesg else reason, "code": CODES.get(status_int, "error"),
                       "errors": {}}).encode()
    head = (f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode("latin-1")
    util.write_nonblock(sock, head + body)


# The workers call util.write_error for these answers; gunicorn has no setting for their body.
util.write_error = write_json_error
