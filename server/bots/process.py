"""Managed bot processes: sandboxed, own process group, capped log, always reaped."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import shlex
import shutil
import signal
import socket
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from server.bots.sandbox import NO_SANDBOX, Confinement, SandboxPolicy, clean_environment, confine
from server.codec.bot_env import FD3_LAUNCHER, SERVER_ADDRESS

LOG_CAP_BYTES = 256 * 1024
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    # Fallback when setpriv is missing; runs Python between fork and exec, which gRPC's
    # fork handlers make risky, hence setpriv first.
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def with_parent_death_signal(argv: list[str]) -> list[str]:
    """argv wrapped so the kernel SIGKILLs the bot if the server dies, even by kill -9."""
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "SIGKILL", "--", *argv] if setpriv else argv


def split_command(command: str | Sequence[str]) -> list[str]:
    """A command line as argv (shell quoting rules, no shell)."""
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    if not argv:
        raise ValueError("empty bot command")
    return argv


class ManagedBot:
    """One bot process the server started and will stop."""

    def __init__(
        self,
        name: str,
        command: str | Sequence[str],
        log_path: Path,
        sandbox: SandboxPolicy = NO_SANDBOX,
        socket_path: str | None = None,
        workdir: Path | None = None,
        hold: IO[bytes] | None = None,
    ) -> None:
        self.name = name
        self.argv = split_command(command)
        self.workdir = workdir  # its stored code, unpacked: the command runs in it
        self.hold = hold  # the code cache's lock on workdir: no eviction until the bot stops
        self.log_path = log_path
        self.sandbox = sandbox
        self.socket_path = socket_path
        self.process: asyncio.subprocess.Process | None = None
        self.confinement: Confinement | None = None
        self._drain: asyncio.Task[None] | None = None
        self.stopping = False  # the server asked it to stop: its exit is no fault of the bot

    @property
    def pid(self) -> int | None:
        """The process id once started."""
        return self.process.pid if self.process else None

    async def start(self, server: str, token: str, local: socket.socket | None = None) -> None:
        """Start the process (in its sandbox) with a clean environment naming server and token.

        With `local`, the bot's end of a socket pair, the bot speaks the local transport on it
        as its fd 3 (CARDSHARK_SERVER=fd:3) and `server` is unused; in the sandbox it then has
        no referee socket at all. Otherwise a sandboxed bot reaches the referee only by the
        Unix socket, whatever `server` says.
        """
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        if local is not None:
            server = SERVER_ADDRESS
        if self.sandbox.on:
            if self.socket_path is None and local is None:
                raise ValueError("a sandboxed bot needs the referee's unix socket")
            self.confinement = confine(
                self.sandbox,
                self.argv,
                None if local is not None else self.socket_path,
                token,
                server=server if local is not None else None,
                workdir=self.workdir,
            )
            argv, env, preexec = self.confinement.argv, self.confinement.env, None
        else:
            argv = with_parent_death_signal(self.argv)
            env = clean_environment(server, token, sandboxed=False)
            preexec = None if argv[0] != self.argv[0] else _die_with_parent
        if local is not None:
            argv = [*FD3_LAUNCHER, *argv]  # the socket goes in as stdin and lands on fd 3
        try:
            self.process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=local.fileno() if local is not None else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
                env=env,
                cwd=self.workdir,
                start_new_session=True,
                preexec_fn=preexec,
                pass_fds=self.confinement.pass_fds if self.confinement is not None else (),
            )
        except BaseException:
            self._release()
            raise
        if self.confinement is not None:
            self.confinement.started()
        self._drain = asyncio.create_task(self._save_stderr())

    async def _save_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        written = 0
        with self.log_path.open("ab") as log:
            while chunk := await self.process.stderr.read(65536):
                if written < LOG_CAP_BYTES:
                    part = chunk[: LOG_CAP_BYTES - written]
                    log.write(part)
                    written += len(part)
                    if written >= LOG_CAP_BYTES:
                        log.write(b"\n[cardshark: log capped here]\n")
                    log.flush()

    @property
    def exited(self) -> bool:
        """True once the process has ended."""
        return self.process is not None and self.process.returncode is not None

    def exit_description(self) -> str:
        """How the process ended, in words ("exited with status 1", "was killed by SIGKILL")."""
        code = self.process.returncode if self.process is not None else None
        if code is None:
            return "is running"
        if code < 0:
            try:
                return f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"was killed by signal {-code}"
        return f"exited with status {code}"

    async def drained(self, timeout: float = 1.0) -> None:
        """Wait (bounded) until everything it wrote to stderr is in its log."""
        if self._drain is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(self._drain), timeout)

    def stderr_tail(self, lines: int = 5, width: int = 200) -> list[str]:
        """The last lines of its log, each cut to width characters (a bot chooses them)."""
        try:
            with self.log_path.open("rb") as log:
                log.seek(0, os.SEEK_END)
                log.seek(max(0, log.tell() - 8192))
                text = log.read().decode("utf-8", "replace")
        except OSError:
            return []
        kept = [line.rstrip() for line in text.splitlines() if line.strip()][-lines:]
        # A bot writes these bytes and the organizer's terminal shows them: no escapes.
        shown = ["".join(c if c.isprintable() else "\ufffd" for c in line) for line in kept]
        return [line if len(line) <= width else line[: width - 1] + "…" for line in shown]

    def running(self) -> bool:
        """True while the process has not exited."""
        return self.process is not None and self.process.returncode is None

    async def stop(self, timeout: float = 2.0) -> int | None:
        """SIGTERM the process group, SIGKILL it after timeout; always reaps."""
        proc = self.process
        if proc is None:
            return None
        self.stopping = True
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), timeout)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                await proc.wait()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # stragglers the bot itself started
        self._release()
        await self.drained()
        return proc.returncode

    def _release(self) -> None:
        if self.confinement is not None:
            self.confinement.release()
        if self.hold is not None:
            self.hold.close()
            self.hold = None
