"""TLS settings of the referee server: certificate, key and, for mutual TLS, a client CA."""

from __future__ import annotations

import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import grpc


LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost", "ip6-loopback"})


class TlsFileError(ValueError):
    """A TLS file is missing, unreadable or not PEM; the message names the file and option."""


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

    @property
    def mutual(self) -> bool:
        """True when clients must present a certificate signed by client_ca."""
        return self.client_ca is not None


def read_pem(path: Path | str, option: str, marker: bytes) -> bytes:
    """A PEM file's bytes, or TlsFileError naming the option and the file."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise TlsFileError(f"{option} {path}: {exc.strerror or exc}") from None
    if marker not in data:
        what = marker.decode().strip("-")
        raise TlsFileError(f"{option} {path}: not a PEM file (no {what!r} block)")
    return data


def load_tls(
    cert: Path | str | None, key: Path | str | None, client_ca: Path | str | None = None
) -> TlsConfig | None:
    """TlsConfig from the command line's files (None without a certificate), checked."""
    if cert is None and key is None:
        if client_ca is not None:
            raise TlsFileError("--tls-client-ca needs --tls-cert and --tls-key (TLS itself)")
        return None
    if cert is None or key is None:
        raise TlsFileError("--tls-cert and --tls-key go together: give both or neither")
    config = TlsConfig(
        read_pem(cert, "--tls-cert", b"-----BEGIN CERTIFICATE-----"),
        read_pem(key, "--tls-key", b"PRIVATE KEY-----"),
        read_pem(client_ca, "--tls-client-ca", b"-----BEGIN CERTIFICATE-----")
        if client_ca is not None
        else None,
    )
    try:  # the same check gRPC makes, but with a reason a person can act on
        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(cert, key, password=lambda: b"")
    except ssl.SSLError as exc:
        reason = exc.reason or str(exc)
        raise TlsFileError(
            f"--tls-key {key} does not fit --tls-cert {cert} ({reason}; "
            "an unencrypted PEM key of that certificate is needed)"
        ) from None
    return config


def server_credentials(config: TlsConfig) -> grpc.ServerCredentials:
    """gRPC server credentials; with a client CA, client certificates are required and checked."""
    import grpc  # late: the CLI sets GRPC_VERBOSITY before gRPC first loads

    return grpc.ssl_server_credentials(
        [(config.private_key, config.cert_chain)],
        root_certificates=config.client_ca,
        require_client_auth=config.client_ca is not None,
    )


def is_loopback(host: str) -> bool:
    """True when host names only this machine (127.0.0.0/8, ::1, localhost)."""
    name = host.strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def plain_tcp_warning(host: str, tls: TlsConfig | None) -> str | None:
    """The one-line warning for plain TCP on a non-loopback interface, else None."""
    if tls is not None or is_loopback(host):
        return None
    return (
        f"warning: serving plain TCP on {host} without TLS: bot tokens, author keys and "
        "submitted code cross the network in clear "
        "(give --tls-cert and --tls-key)"
    )
