"""Model replies within bounds: never compressed, never larger than a cap.

A model endpoint answers through an HTTP transport that asks for no
compression and refuses a compressed reply (a 100 KB gzip can expand to
gigabytes), and stops reading a reply past MAX_REPLY_BYTES: one hostile or
broken endpoint cannot take the process's memory.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx

MAX_REPLY_BYTES = 16 * 2**20
"""The most bytes of one model reply read."""


class ReplyRefusedError(httpx.TransportError):
    """A reply compressed against the request's wish, or past the cap."""


class _Capped(httpx.AsyncByteStream):
    """A reply's body, read only up to the cap."""

    def __init__(self, stream: httpx.AsyncByteStream, limit: int) -> None:
        self.stream, self.limit = stream, limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        read = 0
        async for chunk in self.stream:
            read += len(chunk)
            if read > self.limit:
                raise ReplyRefusedError(
                    f"the model's reply is larger than {self.limit:,} bytes"
                )
            yield chunk

    async def aclose(self) -> None:
        await self.stream.aclose()


class BoundedTransport(httpx.AsyncHTTPTransport):
    """An HTTP transport for model calls: identity encoding, replies capped."""

    def __init__(self, limit: int = MAX_REPLY_BYTES) -> None:
        super().__init__()
        self.limit = limit

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send `request` asking for no compression; refuse a compressed reply."""
        request.headers["Accept-Encoding"] = "identity"
        response = await super().handle_async_request(request)
        encoding = response.headers.get("Content-Encoding", "identity").strip()
        if encoding.lower() not in ("", "identity"):
            await response.aclose()
            raise ReplyRefusedError(
                f"the model's reply is compressed ({encoding}) though none was asked"
            )
        assert isinstance(response.stream, httpx.AsyncByteStream)
        response.stream = _Capped(response.stream, self.limit)
        return response


def bounded_client(timeout_s: float) -> httpx.AsyncClient:
    """The HTTP client model calls go through."""
    return httpx.AsyncClient(transport=BoundedTransport(), timeout=timeout_s)
