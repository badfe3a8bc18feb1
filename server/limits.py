"""Limits on what a peer may send or hold open: gRPC server options and capped bot text."""

from __future__ import annotations

HANDSHAKE_TIMEOUT_MS = 10_000  # a connection that has not spoken HTTP/2 by then is closed
KEEPALIVE_TIME_MS = 20_000  # ping every connection this often, calls or not
KEEPALIVE_TIMEOUT_MS = 10_000  # a peer that does not answer a ping by then is dead
MAX_CONNECTION_IDLE_MS = 60_000  # a connection with no call open that long is closed
MAX_MESSAGE_BYTES = 4 * 1024 * 1024  # admits a ~1 MB action id; bigger messages are refused
MAX_STREAMS_PER_CONNECTION = 32  # a bot needs one; admin tools a few
TEXT_LIMIT = 256  # bytes of any bot-supplied string that is stored or shown


def server_options(
    handshake_timeout_ms: int = HANDSHAKE_TIMEOUT_MS,
    keepalive_time_ms: int = KEEPALIVE_TIME_MS,
    keepalive_timeout_ms: int = KEEPALIVE_TIMEOUT_MS,
    max_connection_idle_ms: int = MAX_CONNECTION_IDLE_MS,
) -> list[tuple[str, int]]:
    """The referee server's gRPC options (tests shorten the timeouts)."""
    return [
        ("grpc.so_reuseport", 0),
        ("grpc.server_handshake_timeout_ms", handshake_timeout_ms),
        ("grpc.keepalive_time_ms", keepalive_time_ms),
        ("grpc.keepalive_timeout_ms", keepalive_timeout_ms),
        ("grpc.keepalive_permit_without_calls", 1),
        # Without this a server stops pinging an idle stream after two pings, and a bot that
        # vanished between matches would hold its bot's one live stream until TCP gives up.
        ("grpc.http2.max_pings_without_data", 0),
        # Clients may keep alive too, but not more often than this (else GOAWAY too_many_pings).
        ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
        ("grpc.max_connection_idle_ms", max_connection_idle_ms),
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_concurrent_streams", MAX_STREAMS_PER_CONNECTION),
    ]


SERVER_OPTIONS: list[tuple[str, int]] = server_options()


def cap_text(text: str, limit: int = TEXT_LIMIT) -> str:
    """text cut to at most limit bytes of UTF-8 (never inside a character), then `…(+N bytes)`."""
    if len(text) * 4 <= limit:  # cannot be over: skip encoding on the common short path
        return text
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    kept = data[:limit].decode("utf-8", "ignore")  # drops a character cut in two
    return f"{kept}…(+{len(data) - len(kept.encode('utf-8', 'surrogatepass'))} bytes)"
