"""Managed bot processes: sandboxed, own process group, capped log, always reaped."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import shlex
import shutil
import signal
from collections.abc import Sequence
from pathlib import Path

from server.sandbox import NO_SANDBOX, Confinement, SandboxPolicy, clean_environment, confine

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
    ) -> None:
        self.name = name
        self.argv = split_command(command)
        self.log_path = log_path
        self.sandbox = sandbox
        self.socket_path = socket_path
        self.process: asyncio.subprocess.Process | None = None
        self.confinement: Confinement | None = None
        self._drain: asyncio.Task[None] | None = None

    @property
    def pid(self) -> int | None:
        """The process id once started."""
        return self.process.pid if self.process else None

    async def start(self, server: str, token: str) -> None:
        """Start the process (in its sandbox) with a clean environment naming server and token.

        In the sandbox the bot reaches the referee only by the socket, whatever `server` says.
        """
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        if self.sandbox.on:
            if self.socket_path is None:
                raise ValueError("a sandboxed bot needs the referee's unix socket")
            self.confinement = confine(self.sandbox, self.argv, self.socket_path, token)
            argv, env, preexec = self.confinement.argv, self.confinement.env, None
        else:
            argv = with_parent_death_signal(self.argv)
            env = clean_environment(server, token, sandboxed=False)
            preexec = None if argv[0] != self.argv[0] else _die_with_parent
        try:
            self.process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
                env=env,
                start_new_session=True,
                preexec_fn=preexec,
            )
        except BaseException:
            self._release()
            raise
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

    def running(self) -> bool:
        """True while the process has not exited."""
        return self.process is not None and self.process.returncode is None

    async def stop(self, timeout: float = 2.0) -> int | None:
        """SIGTERM the process group, SIGKILL it after timeout; always reaps."""
        proc = self.process
        if proc is None:
            return None
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
        if self._drain is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._drain, 1.0)
        return proc.returncode

    def _release(self) -> None:
        if self.confinement is not None:
            self.confinement.release()
