"""Start the gRPC server: Referee, health and reflection on one port (TLS optional).

With a `unix_socket` path the same server also listens on that Unix domain socket,
insecure: it is local, for sandboxed bots that have no network.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from cardshark.v1 import admin_pb2, referee_pb2, submissions_pb2
from server.match.hub import BotHub
from server.match.limits import SERVER_OPTIONS
from server.transport.connections import ConnectionGuard, HelloDeadline
from server.transport.service import SERVICE_NAME, Authenticator, RefereeService
from server.transport.tls import TlsConfig, server_credentials

VERSION = "0.1.0"


@dataclass
class RunningServer:
    """A started server, the port it bound, its bot hub and its Unix socket address if any."""

    server: grpc.aio.Server
    port: int
    hub: BotHub
    address: str
    unix_address: str | None = None  # "unix:/path" when a Unix socket was bound
    tls: bool = False
    guard: ConnectionGuard | None = None  # the connections that have not said Hello

    async def stop(self, grace: float = 1.0) -> None:
        """Graceful shutdown: open streams get `grace` seconds."""
        await self.server.stop(grace)


ServiceAdder = Callable[[grpc.aio.Server], None]


async def start_server(
    authenticate: Authenticator,
    host: str = "127.0.0.1",
    port: int = 0,
    services: Sequence[ServiceAdder] = (),
    *,
    tls: TlsConfig | None = None,
    unix_socket: str | None = None,
    hub: BotHub | None = None,
) -> RunningServer:
    """Bind host:port (0 = a free port; TLS with `tls`) and `unix_socket`, then serve bots
    into `hub` (the caller's, shared with its local transport; else a new one)."""
    hub = hub if hub is not None else BotHub()
    referee = RefereeService(hub, authenticate, VERSION)
    server = grpc.aio.server(options=SERVER_OPTIONS, interceptors=(HelloDeadline(referee.guard),))
    server.add_generic_rpc_handlers((referee.handler(),))
    for add in services:
        add(server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    names = (
        referee_pb2.DESCRIPTOR.services_by_name["Referee"].full_name,
        admin_pb2.DESCRIPTOR.services_by_name["Admin"].full_name,
        submissions_pb2.DESCRIPTOR.services_by_name["Submissions"].full_name,
        health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
        reflection.SERVICE_NAME,
    )
    reflection.enable_server_reflection(names, server)
    try:
        if tls is None:
            bound = server.add_insecure_port(f"{host}:{port}")
        else:
            bound = server.add_secure_port(f"{host}:{port}", server_credentials(tls))
    except RuntimeError as exc:  # grpc reports a busy or bad address this way
        why = "in use or not an address here" + (", or an unusable TLS key" if tls else "")
        raise OSError(f"cannot bind {host}:{port} ({why})") from exc
    if bound == 0:
        raise OSError(f"cannot bind {host}:{port}")
    unix_address = f"unix:{unix_socket}" if unix_socket else None
    if unix_address is not None:
        try:
            unix_bound = server.add_insecure_port(unix_address)
        except RuntimeError as exc:
            raise OSError(f"cannot bind the Unix socket {unix_socket}") from exc
        if unix_bound == 0:
            raise OSError(f"cannot bind the Unix socket {unix_socket}")
    await server.start()
    await health_servicer.set(SERVICE_NAME, health_pb2.HealthCheckResponse.SERVING)
    await health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    return RunningServer(
        server, bound, hub, f"{host}:{bound}", unix_address, tls is not None, referee.guard
    )
