"""The sandbox's launch read in the pytest process: the exact bwrap, setpriv and prlimit flags
`confine` builds, the bot's directory and environment, and the policy's checks.

tests/server/test_seams.py starts one such launch and looks at it from inside; these read the
command line itself, for every case (root or not, a socket or an inherited descriptor, stored
code or a script), so that a flag lost or loosened is named here, not found by an attacker.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from server.bots import sandbox
from server.bots.cgroups import BotLimits
from server.bots.sandbox import (
    CLIENTS_DIR,
    HOME_INSIDE,
    KEYRING_LAUNCHER,
    NO_SANDBOX,
    PROTO_DIR,
    SERVER_PYTHON_BIN,
    SOCKET_INSIDE,
    SYSTEM_DIRS,
    TMP_INSIDE,
    Confinement,
    SandboxError,
    SandboxPolicy,
    absolute_argv,
    bot_directory,
    clean_environment,
    confine,
)
from server.bots.seccomp_filter import SeccompUnavailable, syscall_number

# bwrap's options this module uses, by how many values each takes.
BWRAP_ARITY = {
    "--die-with-parent": 0,
    "--new-session": 0,
    "--unshare-pid": 0,
    "--unshare-net": 0,
    "--unshare-ipc": 0,
    "--unshare-uts": 0,
    "--unshare-cgroup-try": 0,
    "--unshare-user": 0,
    "--hostname": 1,
    "--seccomp": 1,
    "--perms": 1,
    "--size": 1,
    "--tmpfs": 1,
    "--dir": 1,
    "--chdir": 1,
    "--proc": 1,
    "--dev": 1,
    "--ro-bind": 2,
    "--bind": 2,
    "--symlink": 2,
}
UNSHARED = ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]


@dataclass
class Launch:
    """A confinement's command line taken apart."""

    join: list[str]  # the cgroup.procs files the shell joins first ([] without one)
    launcher: list[str]  # the keyring launcher up to bwrap
    bwrap: list[tuple[str, ...]]  # bwrap's options, each with its values
    setpriv: list[str]  # [] when not root
    prlimit: list[str]  # prlimit's flags
    argv: list[str]  # the bot's own command


def parse(cmd: list[str]) -> Launch:
    join: list[str] = []
    if cmd[0] == "/bin/sh":
        assert cmd[1] == "-c" and cmd[3] == "sh", cmd[:4]
        count = int(cmd[4])
        join, cmd = cmd[5 : 5 + count], cmd[5 + count :]
    bwrap_at = cmd.index(shutil.which("bwrap") or "bwrap")
    launcher, rest = cmd[:bwrap_at], cmd[bwrap_at + 1 :]
    options: list[tuple[str, ...]] = []
    while rest[0] != "--":
        arity = BWRAP_ARITY[rest[0]]
        options.append(tuple(rest[: arity + 1]))
        rest = rest[arity + 1 :]
    rest = rest[1:]
    setpriv: list[str] = []
    if rest[0] == "setpriv":
        end = rest.index("--")
        setpriv, rest = rest[1:end], rest[end + 1 :]
    assert rest[0] == "prlimit", rest
    end = rest.index("--")
    return Launch(join, launcher, options, setpriv, rest[1:end], rest[end + 1 :])


@pytest.fixture
def referee_socket(tmp_path: Path) -> Iterator[str]:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "referee.sock"))
        yield str(tmp_path / "referee.sock")


@pytest.fixture
def bot(tmp_path: Path) -> Path:
    """A bot script in a directory of its own."""
    path = tmp_path / "bots" / "mine" / "bot.py"
    path.parent.mkdir(parents=True)
    path.write_text("print('hi')\n")
    return path


@pytest.fixture
def not_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """The server as an ordinary user: a user namespace, no cgroups, no setpriv."""
    monkeypatch.setattr(os, "geteuid", lambda: 1000)


def system_mounts() -> list[tuple[str, ...]]:
    """What the system directories of this machine are in the sandbox: read-only, or the
    same symlink."""
    found: list[tuple[str, ...]] = []
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            found.append(("--symlink", os.readlink(path), path))
        elif os.path.isdir(path):
            found.append(("--ro-bind", path, path))
    return found


def test_every_mount_of_a_root_launch_is_read_only_but_tmp_and_home(
    tmp_path: Path, bot: Path, referee_socket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert os.geteuid() == 0, "the sandbox drops to a uid of its own only when run as root"
    monkeypatch.setattr(sandbox, "_slots_in_use", {0, 1, 2})  # this launch's slot: 3
    sdk = tmp_path / "sdk"
    sdk.mkdir()
    limits = BotLimits(memory_mb=300, pids=20, cpu_s=7, open_files=99, file_size_mb=3, tmp_mb=5)
    readonly = (str(sdk), "/usr/lib", str(tmp_path / "absent"))
    policy = SandboxPolicy(limits=limits, readonly=readonly)
    launch = confine(policy, ["python3", str(bot), "--seat", "x"], referee_socket, "tok")
    try:
        seen = parse(launch.argv)
        assert launch.slot == 3 and launch.cgroups is not None
        cgroups, slot = launch.cgroups, launch.slot
        assert sorted(cgroups.dirs.values())[0].name == f"{os.getpid()}-{slot}"
        assert seen.join == cgroups.procs_files() and seen.join
        (fd,) = launch.pass_fds
        assert seen.launcher == [
            sys.executable,
            "-I",
            "-S",
            "-c",
            KEYRING_LAUNCHER,
            str(syscall_number("keyctl")),
        ]
        own = str(bot.parent)
        parents = sorted(
            {str(p) for b in (str(sdk), own, SOCKET_INSIDE) for p in Path(b).parents}
            - {"/", TMP_INSIDE, HOME_INSIDE}
        )
        tmp_bytes = str(5 << 20)
        assert seen.bwrap == [
            ("--seccomp", str(fd)),
            ("--die-with-parent",),
            ("--new-session",),
            *[(flag,) for flag in UNSHARED],
            ("--unshare-cgroup-try",),
            ("--hostname", "bot"),
            *system_mounts(),
            ("--perms", "1777"),
            ("--size", tmp_bytes),
            ("--tmpfs", TMP_INSIDE),
            ("--perms", "1777"),
            ("--size", tmp_bytes),
            ("--tmpfs", HOME_INSIDE),
            *[x for p in parents for x in [("--perms", "0755"), ("--dir", p)]],
            # /usr/lib is the system's, read-only already; an absent path is not mounted.
            ("--ro-bind", str(sdk), str(sdk)),
            ("--ro-bind", own, own),
            ("--chdir", own),
            ("--proc", "/proc"),
            ("--dev", "/dev"),
            ("--ro-bind", referee_socket, SOCKET_INSIDE),
        ]
        uid = 200_000 + (os.getpid() * 7 + slot) % 50_000
        assert seen.setpriv == [
            f"--reuid={uid}",
            f"--regid={uid}",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--no-new-privs",
        ]
        # The cgroups hold memory and pids here; the rlimits hold the rest.
        assert {"memory", "pids"} <= cgroups.kinds
        assert seen.prlimit == ["--nofile=99", f"--fsize={3 << 20}", "--cpu=7"]
        assert seen.argv == ["python3", str(bot), "--seat", "x"]
        assert launch.env == {
            "CARDSHARK_SERVER": f"unix:{SOCKET_INSIDE}",
            "CARDSHARK_TOKEN": "tok",
            "PATH": f"{SERVER_PYTHON_BIN}:/usr/local/bin:/usr/bin:/bin",
            "LANG": os.environ.get("LANG", "C.UTF-8"),
            "HOME": HOME_INSIDE,
            "TMPDIR": TMP_INSIDE,
        }
        assert "tok" not in launch.argv  # the token goes by the environment, never ps
        os.fstat(fd)  # open for the launch
        launch.started()
        with pytest.raises(OSError):
            os.fstat(fd)
        assert launch.pass_fds == ()
    finally:
        launch.release()
    assert not any(d.exists() for d in cgroups.dirs.values())
    assert slot not in sandbox._slots_in_use and launch.slot is None


def test_a_launch_not_as_root_unshares_the_user_and_limits_by_rlimits_alone(
    not_root: None, tmp_path: Path, bot: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(bot.parent.parent)
    limits = BotLimits(memory_mb=300, pids=20, cpu_s=0, open_files=99, file_size_mb=0, tmp_mb=1)
    policy = SandboxPolicy(limits=limits, readonly=())
    relative = os.path.join("mine", "bot.py")
    extra = ["--bind", str(tmp_path), "/build"]
    launch = confine(policy, ["python3", relative], None, "tok", server="fd:3", mounts=extra)
    try:
        seen = parse(launch.argv)
        assert launch.cgroups is None and seen.join == [] and seen.setpriv == []
        assert seen.launcher[0] == sys.executable  # no shell to join cgroups first
        assert ("--unshare-user",) in seen.bwrap
        assert seen.bwrap.index(("--unshare-user",)) == seen.bwrap.index(("--hostname", "bot")) + 1
        own = str(bot.parent)
        # No socket to bind: the bot speaks on its inherited descriptor.
        assert seen.bwrap[-5:] == [
            ("--ro-bind", own, own),
            ("--bind", str(tmp_path), "/build"),  # more mounts, as given (a build's tree)
            ("--chdir", own),
            ("--proc", "/proc"),
            ("--dev", "/dev"),
        ]
        assert ("--size", str(1 << 20)) in seen.bwrap
        assert seen.prlimit == ["--nofile=99", f"--as={300 << 20}", "--nproc=20"]
        assert seen.argv == ["python3", str(bot)]  # made absolute: it runs in own
        assert launch.env["CARDSHARK_SERVER"] == "fd:3"
        assert launch.env["HOME"] == HOME_INSIDE
    finally:
        launch.release()


def test_stored_code_runs_as_given_in_its_own_directory(
    not_root: None, tmp_path: Path, referee_socket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = tmp_path / "code" / "abc123"
    tree.mkdir(parents=True)
    (tree / "bot.py").write_text("")
    policy = SandboxPolicy(readonly=())
    monkeypatch.chdir(tmp_path)
    relative = Path("code", "abc123")  # mounted where it is
    launch = confine(policy, ["python3", "bot.py"], referee_socket, "t", workdir=relative)
    try:
        seen = parse(launch.argv)
        assert seen.argv == ["python3", "bot.py"]  # the tree's paths, not the server's cwd
        assert ("--ro-bind", str(tree), str(tree)) in seen.bwrap
        assert ("--chdir", str(tree)) in seen.bwrap
    finally:
        launch.release()


def test_a_bot_with_no_directory_of_its_own_starts_in_its_home(
    not_root: None, referee_socket: str
) -> None:
    launch = confine(SandboxPolicy(readonly=()), ["/bin/true"], referee_socket, "t")
    try:
        seen = parse(launch.argv)
        assert ("--chdir", HOME_INSIDE) in seen.bwrap
        binds = [o for o in seen.bwrap if o[0] == "--ro-bind" and o[1] not in SYSTEM_DIRS]
        assert binds == [("--ro-bind", referee_socket, SOCKET_INSIDE)]
        dirs = [o[1] for o in seen.bwrap if o[0] == "--dir"]
        assert dirs == ["/run", "/run/cardshark"]
    finally:
        launch.release()


@pytest.mark.parametrize("where", ["itself", "inside", "relative"])
def test_a_bot_directory_holding_the_servers_files_is_refused_before_anything_is_taken(
    where: str, tmp_path: Path, bot: Path, referee_socket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    server_file = bot.parent if where == "itself" else bot.parent / "deep" / "cs.db"
    named = str(server_file)
    if where == "relative":  # the server's working directory, as "." or "cs.db"
        monkeypatch.chdir(server_file.parent.parent)
        named = os.path.join("deep", "cs.db")
    policy = SandboxPolicy(forbidden=(str(tmp_path / "elsewhere"), named))
    before = set(sandbox._slots_in_use)
    with pytest.raises(SandboxError) as refused:
        confine(policy, [sys.executable, str(bot)], referee_socket, "t")
    assert str(refused.value) == (
        f"the bot's directory {bot.parent} holds {named} (the server's files); "
        "put the bot in a directory of its own"
    )
    assert sandbox._slots_in_use == before


def test_the_servers_files_beside_the_bot_directory_are_no_reason_to_refuse(
    not_root: None, tmp_path: Path, bot: Path, referee_socket: str
) -> None:
    policy = SandboxPolicy(forbidden=(str(tmp_path / "cs.db"), str(bot.parent.parent)))
    launch = confine(policy, [sys.executable, str(bot)], referee_socket, "t")
    launch.release()


def test_without_bwrap_or_seccomp_no_sandbox_is_built(
    monkeypatch: pytest.MonkeyPatch, referee_socket: str
) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(SandboxError) as refused:
        confine(SandboxPolicy(), ["/bin/true"], referee_socket, "t")
    assert str(refused.value) == "bwrap is not installed (Debian package bubblewrap)"
    monkeypatch.undo()

    def unavailable() -> bytes:
        raise SeccompUnavailable("no libseccomp here")

    monkeypatch.setattr(sandbox, "bot_filter", unavailable)
    before = set(sandbox._slots_in_use)
    with pytest.raises(SandboxError, match="^no libseccomp here$") as refused:
        confine(SandboxPolicy(), ["/bin/true"], referee_socket, "t")
    assert isinstance(refused.value.__cause__, SeccompUnavailable)
    assert sandbox._slots_in_use == before


def test_the_policy_reads_the_python_the_sdks_and_the_protos_and_names_kinds() -> None:
    policy = SandboxPolicy()
    python = sorted({os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix), sys.prefix})
    assert policy.readonly == (*python, str(CLIENTS_DIR), str(PROTO_DIR))
    assert policy.limits == BotLimits() and policy.forbidden == () and policy.code_cache is None
    assert policy.on and policy.kind == "bwrap"
    assert not NO_SANDBOX.on
    with pytest.raises(SandboxError) as refused:
        SandboxPolicy(kind="docker")
    assert str(refused.value) == "unknown sandbox 'docker'; allowed: bwrap, none"


def test_the_bot_directory_is_that_of_its_first_own_file(
    tmp_path: Path, bot: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    policy = SandboxPolicy(readonly=(str(tmp_path / "sdk"),))
    sdk_file = tmp_path / "sdk" / "kit.py"
    sdk_file.parent.mkdir()
    sdk_file.write_text("")
    other = tmp_path / "other" / "data.txt"
    other.parent.mkdir()
    other.write_text("")
    # Not files (an option, a directory, nothing), the system's and the policy's: skipped.
    argv = ["-u", str(tmp_path), str(tmp_path / "none"), "/bin/sh", str(sdk_file), str(bot)]
    assert bot_directory([*argv, str(other)], policy) == bot.parent
    assert bot_directory([str(sdk_file)], policy) is None
    assert bot_directory([], policy) is None
    # The policy's directory itself counts as within it.
    assert bot_directory([str(sdk_file)], SandboxPolicy(readonly=(str(sdk_file),))) is None
    monkeypatch.chdir(bot.parent)
    assert bot_directory(["bot.py"], policy) == bot.parent  # relative: made absolute


def test_only_existing_relative_paths_are_made_absolute(
    tmp_path: Path, bot: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(bot.parent)
    argv = ["python3", "bot.py", "gone.py", str(bot), "--x", "/no/such"]
    assert absolute_argv(argv) == ["python3", str(bot), "gone.py", str(bot), "--x", "/no/such"]


def test_the_environment_is_exactly_the_documented_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SECRET", "x")
    monkeypatch.setenv("PATH", "/server/bin")
    monkeypatch.setenv("HOME", "/root/server")
    monkeypatch.setenv("TMPDIR", "/var/server-tmp")
    monkeypatch.delenv("LANG", raising=False)
    inside = {
        "CARDSHARK_SERVER": "unix:/s",
        "CARDSHARK_TOKEN": "tok",
        "PATH": f"{SERVER_PYTHON_BIN}:/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "HOME": HOME_INSIDE,
        "TMPDIR": TMP_INSIDE,
    }
    assert clean_environment("unix:/s", "tok", sandboxed=True) == inside
    # Unsandboxed, the bot runs as the server's user: its PATH, HOME and TMPDIR.
    assert clean_environment("unix:/s", "tok", sandboxed=False) == {
        **inside,
        "PATH": "/server/bin",
        "HOME": "/root/server",
        "TMPDIR": "/var/server-tmp",
    }
    monkeypatch.setenv("LANG", "de_DE.UTF-8")
    for name in ("PATH", "HOME", "TMPDIR"):
        monkeypatch.delenv(name)
    assert clean_environment("s", "t", sandboxed=False) == {
        "CARDSHARK_SERVER": "s",
        "CARDSHARK_TOKEN": "t",
        "PATH": f"{SERVER_PYTHON_BIN}:/usr/local/bin:/usr/bin:/bin",
        "LANG": "de_DE.UTF-8",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
    }


@pytest.fixture
def fresh_probe() -> Iterator[None]:
    """unavailable_reason probes once per process: these tests probe again, then forget."""
    sandbox.unavailable_reason.cache_clear()
    yield
    sandbox.unavailable_reason.cache_clear()


def test_the_probe_names_what_is_missing(
    fresh_probe: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = shutil.which
    for tool, why in [
        ("bwrap", "bwrap is not installed (Debian package bubblewrap)"),
        ("setpriv", "setpriv is not installed (Debian package util-linux)"),
        ("prlimit", "prlimit is not installed (Debian package util-linux)"),
    ]:
        monkeypatch.setattr(
            shutil, "which", lambda name, gone=tool: None if name == gone else real(name)
        )
        sandbox.unavailable_reason.cache_clear()
        assert sandbox.unavailable_reason() == why
    monkeypatch.undo()

    def unavailable() -> bytes:
        raise SeccompUnavailable("no libseccomp here")

    monkeypatch.setattr(sandbox, "bot_filter", unavailable)
    sandbox.unavailable_reason.cache_clear()
    assert sandbox.unavailable_reason() == "no libseccomp here"


def test_the_probe_launches_a_sandbox_and_reports_its_last_word(
    fresh_probe: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert sandbox.unavailable_reason() is None  # this machine builds it (CI installs bwrap)
    launched: list[Confinement] = []
    real = sandbox.confine

    def failing(script: str) -> None:
        def confine(*args: object, **kwargs: object) -> Confinement:
            launch = real(*args, **kwargs)  # type: ignore[arg-type]
            assert launch.argv[-1] == "/bin/true" and launch.env["CARDSHARK_TOKEN"] == "probe"
            launch.argv = ["/bin/sh", "-c", script]
            launched.append(launch)
            return launch

        monkeypatch.setattr(sandbox, "confine", confine)
        sandbox.unavailable_reason.cache_clear()

    failing("echo starting >&2; echo 'bwrap: no permission' >&2; exit 1")
    assert sandbox.unavailable_reason() == "bwrap cannot build a sandbox here: bwrap: no permission"
    failing("exit 3")
    assert sandbox.unavailable_reason() == "bwrap cannot build a sandbox here: exit code 3"
    failing("exit 0")
    assert sandbox.unavailable_reason() is None
    # Every probe's slot and descriptors were given back.
    assert all(launch.slot is None and launch.pass_fds == () for launch in launched)
