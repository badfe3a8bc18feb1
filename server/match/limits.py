"""Limits on what a peer may send or hold open: gRPC server options and capped bot text."""

from __future__ import annotations

import resource

HANDSHAKE_TIMEOUT_MS = 10_000  # a connection that has not spoken HTTP/2 by then is closed
KEEPALIVE_TIME_MS = 20_000  # ping every connection this often, calls or not
KEEPALIVE_TIMEOUT_MS = 10_000  # a peer that does not answer a ping by then is dead
# A connection is told GOAWAY this long (±10 %, gRPC's jitter) after its handshake, or after
# this long without a call open: it takes no new call then, and closes once its calls end.
# Calls that said Hello go on (no grace limit): a seated bot's stream lasts as long as it
# plays, and clients open a new connection for their next call. The rest end 10 s after the
# connection's first call (server/transport/connections.py): so a connection that has not said Hello
# is closed at most 11 s after its handshake, whatever calls it opens.
MAX_CONNECTION_AGE_MS = 9_000
MAX_CONNECTION_IDLE_MS = 1_000
MAX_CONNECTIONS = 1000  # per listening address, and at most a quarter of the descriptor limit
MAX_MESSAGE_BYTES = 4 * 1024 * 1024  # admits a ~1 MB action id; bigger messages are refused
MAX_STREAMS_PER_CONNECTION = 32  # a bot needs one; admin tools a few
TEXT_LIMIT = 256  # bytes of any bot-supplied string that is stored or shown


def server_options(
    handshake_timeout_ms: int = HANDSHAKE_TIMEOUT_MS,
    keepalive_time_ms: int = KEEPALIVE_TIME_MS,
    keepalive_timeout_ms: int = KEEPALIVE_TIMEOUT_MS,
    max_connection_idle_ms: int = MAX_CONNECTION_IDLE_MS,
    max_connection_age_ms: int = MAX_CONNECTION_AGE_MS,
    max_connections: int | None = None,
) -> list[tuple[str, int]]:
    """The referee server's gRPC options (tests shorten the timeouts)."""
    if max_connections is None:
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        unlimited = soft == resource.RLIM_INFINITY
        max_connections = MAX_CONNECTIONS if unlimited else min(MAX_CONNECTIONS, soft // 4)
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
        ("grpc.max_connection_age_ms", max_connection_age_ms),
        ("grpc.max_connection_age_grace_ms", 2**31 - 1),  # INT_MAX: no limit
        # gRPC accepts and at once closes a connection over this, on each port it listens on,
        # so a flood of connections leaves the server descriptors for its database and bots.
        ("grpc.max_allowed_incoming_connections", max_connections),
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
