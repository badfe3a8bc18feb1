"""`cardshark serve`: the referee, the Admin service and the web page."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from server.cli.common import (
    DbOption,
    check_listen,
    console,
    errors,
    fail,
    log_directory,
    open_store,
    port_number,
)
from server.cli.referee_options import RefereeOptions, referee_options
from tournaments.store import Store


@referee_options()
def serve(
    port: Annotated[int, typer.Option(callback=port_number, help="Port to listen on.")] = 50051,
    admin_token: Annotated[
        str | None,
        typer.Option(
            envvar="CARDSHARK_ADMIN_TOKEN",
            help="Enables the Admin service; set the variable rather than the flag (ps shows it).",
        ),
    ] = None,
    admin_token_file: Annotated[
        Path | None,
        typer.Option(help="Enables the Admin service with the token in this file (mode 0600)."),
    ] = None,
    log_dir: Annotated[Path, typer.Option(help="Where managed bots' stderr goes.")] = Path("logs"),
    web_port: Annotated[
        int,
        typer.Option(
            callback=port_number,
            help="Port of the web page (leaderboards, replays); 0 turns it off.",
        ),
    ] = 8080,
    db: DbOption = None,
    *,
    referee: RefereeOptions,
) -> None:
    """Run the referee for bots, the Admin service for tools and the web page for people."""
    host, tls_cert, tls_key = referee.host, referee.tls_cert, referee.tls_key
    referee.check()
    check_listen(host, port)
    if web_port:
        check_listen(
            host, web_port, port_flag="--web-port", purpose="the web page", zero="no web page"
        )
    tls = referee.tls()
    web_tls = (tls_cert, tls_key) if tls_cert and tls_key else None
    from server.admin import AdminService, AdminTokenError, admin_token_source
    from server.play.arena import Arena
    from server.play.tournament import database_authenticator
    from server.submissions.service import SubmissionsService
    from server.submissions.verdicts import Verdicts, VerdictSettings

    try:
        admin_token, token_warning = admin_token_source(admin_token, admin_token_file, sys.argv)
    except AdminTokenError as exc:
        fail(str(exc))
    if token_warning is not None:
        errors.print(f"[bold yellow]{token_warning}[/]", highlight=False, soft_wrap=True)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()

        def stop_on(name: str) -> None:
            stopped_by.append(name)
            stop.set()

        for sig, name in ((signal.SIGINT, "Ctrl-C"), (signal.SIGTERM, "SIGTERM")):
            loop.add_signal_handler(sig, stop_on, name)
        arena = Arena(
            log_dir,
            host,
            port,
            database_authenticator(store),
            tls=tls,
            sandbox=policy,
            cpu_clocks=referee.cpu_clocks,
            transport=referee.transport,
        )
        service = AdminService(store, arena, admin_token)
        verdicts = Verdicts(store, VerdictSettings(policy, log_dir))
        arena.services += [service.add_to, SubmissionsService(store, verdicts).add_to]
        async with arena:
            await verdicts.start()
            admin = "on" if admin_token else "off (no CARDSHARK_ADMIN_TOKEN or --admin-token-file)"
            over = "mutual TLS" if tls and tls.mutual else "TLS" if tls else "plain TCP"
            console.print(f"cardshark serving on {arena.address} ({over}); admin service {admin}")
            web = await start_web(store, host, web_port, web_tls) if web_port else None
            if web is not None:
                scheme = "https" if web_tls else "http"
                console.print(f"web page on {scheme}://{host}:{web_port}/")
            try:
                await stop.wait()
            finally:
                for tid in await service.interrupt_all():
                    errors.print(
                        f"tournament {tid} interrupted; resume it with: "
                        f"cardshark tournament resume {tid}",
                        highlight=False,
                        markup=False,
                    )
                await verdicts.stop()
                if web is not None:
                    await web.stop()

    stopped_by: list[str] = []
    with open_store(db, create=True) as store:
        policy = referee.policy(store, log_dir)
        log_directory(log_dir)
        try:
            asyncio.run(main())
        except OSError as exc:
            fail(f"cannot serve on {host}:{port}: {exc}")
        console.print(f"stopped ({stopped_by[0] if stopped_by else 'shut down'})")


class WebPage:
    """The web page's uvicorn server running as a task on the referee's loop."""

    def __init__(self, server: Any, task: asyncio.Task[None]) -> None:
        self.server = server
        self.task = task

    async def stop(self, timeout: float = 5.0) -> None:
        """Close connections and wait (bounded) for the server task to end."""
        self.server.should_exit = True
        with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(self.task, timeout)


async def start_web(
    store: Store, host: str, port: int, tls_files: tuple[Path, Path] | None = None
) -> WebPage:
    """Serve the web page from this event loop (HTTPS with tls_files)."""
    import socket

    import uvicorn

    from server.web.app import make_app

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield  # Ctrl-C belongs to the referee, which stops everything in order

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)  # connections wait in the backlog until uvicorn accepts them
    except OSError as exc:
        sock.close()
        raise OSError(
            f"cannot bind the web page to {host}:{port}: {exc.strerror}; choose another with "
            "--web-port PORT, or --web-port 0 for no web page"
        ) from None
    cert, key = tls_files or (None, None)
    # No lifespan: the app has no startup work, and a lifespan task cancelled at shutdown
    # prints a traceback.
    config = uvicorn.Config(
        make_app(store), log_level="warning", ssl_certfile=cert, ssl_keyfile=key, lifespan="off"
    )
    try:
        config.load()  # a certificate uvicorn cannot use fails here, not in the task
    except OSError:
        sock.close()
        raise
    server = Server(config)
    return WebPage(server, asyncio.get_running_loop().create_task(server.serve(sockets=[sock])))
