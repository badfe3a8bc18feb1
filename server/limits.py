"""Limits on what a peer may send or hold open: gRPC channel options of the referee server."""

from __future__ import annotations

SERVER_OPTIONS: list[tuple[str, int]] = [
    ("grpc.so_reuseport", 0),
    ("grpc.keepalive_permit_without_calls", 1),
]
