"""`cardshark serve`: the referee, the Admin and Submissions services and the web page."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from server.bots.sandbox import SandboxPolicy
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
from server.submissions.limits import SubmissionLimits
from server.transport.tls import TlsConfig
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
    submissions_per_hour: Annotated[
        int, typer.Option(min=0, help="Submissions each author may send an hour (0: no limit).")
    ] = SubmissionLimits.per_hour,
    bots_per_author: Annotated[
        int, typer.Option(min=0, help="Bots each author may have in play (0: no limit).")
    ] = SubmissionLimits.bots,
    build_seconds: Annotated[
        int, typer.Option(min=1, help="Wall time a submission's build may take.")
    ] = SubmissionLimits.build_seconds,
    build_mb: Annotated[
        int, typer.Option(min=1, help="MiB a submission's build may write.")
    ] = SubmissionLimits.build_mb,
    processes: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Referee processes a tournament is played by, each on a core with its own "
            "copy of the managed bots (default: one per 200 unfinished matches, up to one "
            "per core); a tournament with remote bots uses one.",
        ),
    ] = None,
    db: DbOption = None,
    *,
    referee: RefereeOptions,
) -> None:
    """Run the referee for bots, the Admin and Submissions services and the web page."""
    from server.admin import AdminTokenError, admin_token_source

    referee.check()
    check_listen(referee.host, port)
    if web_port:
        check_listen(
            referee.host, web_port, port_flag="--web-port", purpose="the web page",
            zero="no web page",
        )  # fmt: skip
    try:
        admin_token, token_warning = admin_token_source(admin_token, admin_token_file, sys.argv)
    except AdminTokenError as exc:
        fail(str(exc))
    if token_warning is not None:
        errors.print(f"[bold yellow]{token_warning}[/]", highlight=False, soft_wrap=True)
    limits = SubmissionLimits(submissions_per_hour, bots_per_author, build_seconds, build_mb)
    with open_store(db, create=True) as store:
        plan = ServePlan(
            store, referee, port, web_port, log_dir, admin_token, limits, referee.tls(),
            referee.policy(store, log_dir), processes,
        )  # fmt: skip
        log_directory(log_dir)
        try:
            stopped_by = asyncio.run(plan.run())
        except OSError as exc:
            fail(f"cannot serve on {referee.host}:{port}: {exc}")
        console.print(f"stopped ({stopped_by})")


@dataclass
class ServePlan:
    """What `serve` runs, checked: the store, the referee's options, ports and services."""

    store: Store
    referee: RefereeOptions
    port: int
    web_port: int
    log_dir: Path
    admin_token: str | None
    limits: SubmissionLimits
    tls: TlsConfig | None
    policy: SandboxPolicy
    processes: int | None = None  # None: as many as each tournament pays for

    async def run(self) -> str:
        """Serve until Ctrl-C or SIGTERM; returns which stopped it."""
        from server.admin import AdminService
        from server.bots.build import BuildLimits
        from server.play.arena import Arena
        from server.play.tournament import database_authenticator
        from server.submissions.service import SubmissionsService
        from server.submissions.verdicts import Verdicts, VerdictSettings

        stop = asyncio.Event()
        stopped_by: list[str] = []

        def stop_on(name: str) -> None:
            stopped_by.append(name)
            stop.set()

        loop = asyncio.get_running_loop()
        for sig, name in ((signal.SIGINT, "Ctrl-C"), (signal.SIGTERM, "SIGTERM")):
            loop.add_signal_handler(sig, stop_on, name)
        arena = Arena(
            self.log_dir, self.referee.host, self.port, database_authenticator(self.store),
            tls=self.tls, sandbox=self.policy, cpu_clocks=self.referee.cpu_clocks,
            transport=self.referee.transport,
        )  # fmt: skip
        admin = AdminService(self.store, arena, self.admin_token, self.processes)
        build = BuildLimits(time_s=self.limits.build_seconds, write_mb=self.limits.build_mb)
        verdicts = Verdicts(self.store, VerdictSettings(self.policy, self.log_dir, build=build))
        submissions = SubmissionsService(self.store, verdicts, self.limits)
        arena.services += [admin.add_to, submissions.add_to]
        async with arena:
            await verdicts.start()
            self._say_where(arena.address)
            web = await self._start_web()
            try:
                await stop.wait()
            finally:
                for tid in await admin.interrupt_all():
                    errors.print(
                        f"tournament {tid} interrupted; resume it with: "
                        f"cardshark tournament resume {tid}",
                        highlight=False,
                        markup=False,
                    )
                await verdicts.stop()
                if web is not None:
                    await web.stop()
        return stopped_by[0] if stopped_by else "shut down"

    def _say_where(self, address: str) -> None:
        admin = "on" if self.admin_token else "off (no CARDSHARK_ADMIN_TOKEN or --admin-token-file)"
        over = "mutual TLS" if self.tls and self.tls.mutual else "TLS" if self.tls else "plain TCP"
        console.print(
            f"cardshark serving on {address} ({over}); admin service {admin}; submissions on"
        )

    async def _start_web(self) -> WebPage | None:
        if not self.web_port:
            return None
        cert, key = self.referee.tls_cert, self.referee.tls_key
        web_tls = (cert, key) if cert and key else None
        web = await start_web(self.store, self.referee.host, self.web_port, web_tls)
        scheme = "https" if web_tls else "http"
        console.print(f"web page on {scheme}://{self.referee.host}:{self.web_port}/")
        return web


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
