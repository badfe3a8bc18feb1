"""TLS settings of the referee server: certificate, key and, for mutual TLS, a client CA."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class TlsConfig:
    """PEM bytes of the server's certificate chain and key, and the CA of client certificates."""

    cert_chain: bytes
    private_key: bytes
    client_ca: bytes | None = None

    @classmethod
    def from_files(
        cls, cert: Path | str, key: Path | str, client_ca: Path | str | None = None
    ) -> TlsConfig:
        """Read the PEM files."""
        return cls(
            Path(cert).read_bytes(),
            Path(key).read_bytes(),
            Path(client_ca).read_bytes() if client_ca else None,
        )
