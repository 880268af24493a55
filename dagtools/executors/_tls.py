"""The certificate store HTTP clients verify servers against."""

from __future__ import annotations

import os
import ssl
from functools import lru_cache

import httpx

__all__ = ["tls_context"]


def tls_context() -> ssl.SSLContext:
    """The certificate store every client made here verifies against, loaded once per process.

    httpx reads the whole CA bundle for every client it makes (about 20 ms), and a server makes an
    executor per session. A context is safe to share; it is made as httpx would make it, so
    `SSL_CERT_FILE` and `SSL_CERT_DIR` still choose the store (each value its own context).
    """
    return _tls_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@lru_cache(maxsize=4)
def _tls_context(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    return httpx.create_ssl_context()
