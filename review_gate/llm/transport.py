"""The run's HTTP transport: httpx's own, with TLS made ready only when a request needs it.

httpx sets TLS up when a client is made: it loads a certificate store (certifi's bundle, or
``$SSL_CERT_FILE`` / ``$SSL_CERT_DIR``), some 20-40 ms of CPU on the way to the first request.
A review against a local endpoint on plain http (llama.cpp, vLLM, Ollama, a proxy on localhost)
never uses it. So each request goes to one of two httpx transports by its scheme: https to one
made as httpx makes its default one (verifying, the environment's certificate settings
honoured) when the first https request is sent; plain http to one whose TLS context trusts no
certificate at all, never given an https request (if it were, the connection would fail, never
go unverified). Proxies from the environment are the client's own mounts, as before.
"""

from __future__ import annotations

import ssl

import httpx


class ByScheme(httpx.AsyncBaseTransport):
    """The transport of a run's client (``client.new_client``)."""

    def __init__(self, limits: httpx.Limits) -> None:
        self._limits = limits
        self._plain: httpx.AsyncHTTPTransport | None = None
        self._tls: httpx.AsyncHTTPTransport | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self._for(request.url.scheme).handle_async_request(request)

    def _for(self, scheme: str) -> httpx.AsyncHTTPTransport:
        # No await between the look and the making: two requests never make two transports.
        if scheme == "https":
            if self._tls is None:
                self._tls = httpx.AsyncHTTPTransport(limits=self._limits, trust_env=True)
            return self._tls
        if self._plain is None:
            self._plain = httpx.AsyncHTTPTransport(verify=ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT),
                                                   limits=self._limits, trust_env=True)
        return self._plain

    async def aclose(self) -> None:
        try:
            if self._plain is not None:
                await self._plain.aclose()
        finally:
            if self._tls is not None:
                await self._tls.aclose()
