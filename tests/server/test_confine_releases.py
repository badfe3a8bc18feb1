"""sandbox.confine checks before it takes a uid slot and cgroups, and gives back what it took."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from server.bots import sandbox
from server.bots.cgroups import BotCgroups, BotLimits
from server.bots.sandbox import Confinement, SandboxError, SandboxPolicy, confine
from tests.server.conftest import RANDOM_BOT


def test_a_bot_with_no_way_to_the_referee_is_refused_before_anything_is_taken() -> None:
    before = set(sandbox._slots_in_use)
    with pytest.raises(SandboxError) as refused:
        confine(SandboxPolicy(), RANDOM_BOT, socket_path=None, token="t", server=None)
    assert str(refused.value) == "a sandboxed bot needs the referee's socket or an inherited one"
    assert sandbox._slots_in_use == before


def test_a_launch_that_fails_after_taking_its_slot_gives_the_slot_and_cgroups_back(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    made: list[BotCgroups] = []

    def recording(name: str, limits: BotLimits) -> BotCgroups:
        made.append(BotCgroups(name, limits))
        return made[-1]

    def no_filter() -> int:
        raise OSError("no descriptors left")

    monkeypatch.setattr(sandbox, "BotCgroups", recording)
    monkeypatch.setattr(sandbox, "filter_fd", no_filter)
    before = set(sandbox._slots_in_use)
    with pytest.raises(OSError, match="no descriptors left"):
        confine(SandboxPolicy(), RANDOM_BOT, socket_path=None, token="t", server="fd:3")
    assert sandbox._slots_in_use == before
    if os.geteuid() == 0:  # cgroups are the root server's; they were made and removed
        assert made and made[0].dirs
        assert not any(d.exists() for d in made[0].dirs.values())


class RecordingCgroups:
    """What release asks of a bot's cgroups."""

    def __init__(self) -> None:
        self.killed = 0

    def kill_all(self) -> None:
        self.killed += 1


def test_each_launch_takes_the_lowest_free_uid_slot_and_release_frees_it_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sandbox, "_slots_in_use", {0, 1, 3})
    assert sandbox._take_slot() == 2
    assert sandbox._take_slot() == 4
    assert sandbox._slots_in_use == {0, 1, 2, 3, 4}
    read, write = os.pipe()
    cgroups = RecordingCgroups()
    launch = Confinement(SandboxPolicy(), ["x"], {}, cgroups, 2, (read, write))  # type: ignore[arg-type]
    launch.release()
    assert sandbox._slots_in_use == {0, 1, 3, 4} and launch.slot is None
    assert cgroups.killed == 1 and launch.pass_fds == ()
    for fd in (read, write):  # the launch's descriptors are closed with it
        with pytest.raises(OSError):
            os.fstat(fd)
    launch.release()  # twice: nothing more to free, no other launch's slot
    assert sandbox._slots_in_use == {0, 1, 3, 4}
    assert sandbox._take_slot() == 2


def test_a_launch_whose_descriptor_is_closed_already_starts_and_releases_quietly() -> None:
    read, write = os.pipe()
    os.close(read)
    launch = Confinement(SandboxPolicy(), ["x"], {}, None, None, (read, write))
    launch.started()  # the first is gone already: the second is still closed
    assert launch.pass_fds == ()
    with pytest.raises(OSError):
        os.fstat(write)
    launch.release()
