"""Secrets handed out once and stored only as SHA-256 hex digests: bot tokens, author keys."""

from __future__ import annotations

import hashlib
import hmac
import secrets


def new_token() -> str:
    """A new bot token or author key: 256 random bits in hex, so it never starts with '-'
    (which every kit's argument parser would take for an option: `--token -x…` fails) and
    needs no quoting in a shell, a URL or an environment variable."""
    return secrets.token_hex(32)


def hash_token(token: str) -> str:
    """The SHA-256 hex digest a bot token (or an author key) is stored as."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def digest_matches(stored: str | None, digest: str) -> bool:
    """Whether a row found by a digest holds it, compared in constant time (None: no key)."""
    return stored is not None and hmac.compare_digest(stored, digest)
