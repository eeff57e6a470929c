"""The TLS context of the run's HTTP client: it verifies as httpx's default one does, and loads
its certificate store on its first handshake.

httpx loads a certificate store when a client is made (certifi's bundle, or the file or
directory ``$SSL_CERT_FILE`` / ``$SSL_CERT_DIR`` names), some 20-40 ms of CPU on the way to
the first request, which a review against a local endpoint on plain http (llama.cpp, vLLM,
Ollama) never uses. Given as the client's ``verify``, this context serves every transport the
client makes, the environment's proxies included (httpx keeps those only for a client made
without a transport of its own), and an https request loads the same store httpx would have,
chosen when the client is made. anyio runs the handshake's first step of a context that is not
the standard library's own in a worker thread: the store is read there, off the event loop.
"""

from __future__ import annotations

import os
import socket
import ssl
import sys
import threading

from review_gate.errors import AgentFault


class LazyStore(ssl.SSLContext):
    """A client context (``PROTOCOL_TLS_CLIENT``: certificates and host names checked) whose CA
    store is loaded when it first wraps a connection."""

    _cafile: str | None
    _capath: str | None
    _source: str  # where the store was named: $SSL_CERT_FILE, $SSL_CERT_DIR or certifi
    _loaded: bool
    _lock: threading.Lock

    def _load(self) -> None:
        with self._lock:  # two handshakes at once, in two worker threads: one load
            if self._loaded:
                return
            if self._cafile is None and self._capath is None:
                import certifi  # its path found when needed: importlib.resources, on its first use

                self._cafile = certifi.where()
            try:
                self.load_verify_locations(cafile=self._cafile, capath=self._capath)
            except (OSError, ssl.SSLError) as exc:  # permanent: the agent fails, its message names the setting
                raise AgentFault(f"the certificates for https cannot be read from {self._source} "
                                 f"{self._cafile or self._capath!r} ({exc}); point it at a readable CA "
                                 "bundle, or unset it") from None
            self._loaded = True

    def wrap_bio(self, incoming: ssl.MemoryBIO, outgoing: ssl.MemoryBIO, server_side: bool = False,
                 server_hostname: str | bytes | None = None, session: ssl.SSLSession | None = None) -> ssl.SSLObject:
        self._load()
        return super().wrap_bio(incoming, outgoing, server_side, server_hostname, session)

    def wrap_socket(self, sock: socket.socket, server_side: bool = False, do_handshake_on_connect: bool = True,
                    suppress_ragged_eofs: bool = True, server_hostname: str | bytes | None = None,
                    session: ssl.SSLSession | None = None) -> ssl.SSLSocket:
        self._load()
        return super().wrap_socket(sock, server_side, do_handshake_on_connect, suppress_ragged_eofs,
                                   server_hostname, session)


def verifying() -> LazyStore:
    """What httpx's ``create_ssl_context()`` makes (``ssl.create_default_context`` over the
    environment's or certifi's store), but for the loading."""
    context = LazyStore(ssl.PROTOCOL_TLS_CLIENT)
    # as httpx reads the environment (trust_env), when the client is made; neither: certifi's
    context._cafile = os.environ.get("SSL_CERT_FILE") or None
    context._capath = None if context._cafile else os.environ.get("SSL_CERT_DIR") or None
    context._source = ("$SSL_CERT_FILE" if context._cafile else "$SSL_CERT_DIR" if context._capath
                       else "certifi's bundle")
    context._loaded, context._lock = False, threading.Lock()
    # the rest of what ssl.create_default_context sets for a client
    context.verify_mode, context.check_hostname = ssl.CERT_REQUIRED, True
    if sys.version_info >= (3, 13):
        context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN | ssl.VERIFY_X509_STRICT
    keylog = os.environ.get("SSLKEYLOGFILE")
    if keylog and not sys.flags.ignore_environment:
        context.keylog_filename = keylog
    return context
