"""Request-body size limit as a plain ASGI middleware, answering 413 before the app reads.

A Content-Length over the limit is refused at once; a body without one (chunked) is read up
to the limit and refused as soon as it passes it. Bodies within the limit are replayed to
the app unchanged.
"""

from __future__ import annotations

import json


def error_body(status: int, kind: str, message: str) -> dict:
    """The JSON every error response of the server carries."""
    return {"error": {"status": status, "type": kind, "message": message}}


class BodyLimit:
    """Refuse request bodies larger than a per-path limit with a 413 JSON error.

    Args:
        app: the ASGI app to wrap.
        default_bytes: the limit for every path not in per_path.
        per_path: path -> limit (e.g. larger for audio uploads).
    """

    def __init__(self, app, default_bytes: int, per_path: dict[str, int] | None = None):
        self.app = app
        self.default_bytes = default_bytes
        self.per_path = per_path or {}

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            return await self.app(scope, receive, send)
        limit = self.per_path.get(scope["path"], self.default_bytes)
        length = _content_length(scope)
        if length is not None and length > limit:
            return await _too_large(send, limit)
        if length is not None:
            return await self.app(scope, receive, send)
        body, more = await _read_up_to(receive, limit)
        if len(body) > limit:
            return await _too_large(send, limit)
        return await self.app(scope, _replay(body, more, receive), send)


def _content_length(scope) -> int | None:
    for key, value in scope.get("headers", []):
        if key == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _read_up_to(receive, limit: int) -> tuple[bytes, bool]:
    """(body so far, more_body) after reading until the end or past the limit."""
    chunks, size, more = [], 0, True
    while more and size <= limit:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks), False
        chunk = message.get("body", b"")
        chunks.append(chunk)
        size += len(chunk)
        more = message.get("more_body", False)
    return b"".join(chunks), more


def _replay(body: bytes, more: bool, receive):
    sent = False

    async def replay():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": more}
        return await receive()

    return replay


async def _too_large(send, limit: int) -> None:
    payload = json.dumps(error_body(413, "too_large",
                                    f"request body over the limit of {limit} bytes")).encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(payload)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": payload})
