"""OrderedCommitter: results are committed in schedule order whatever order they finish in."""

from __future__ import annotations

import random
import threading

import pytest

from tournaments.committer import OrderedCommitter


def test_items_wait_for_every_earlier_index() -> None:
    committed: list[str] = []
    c: OrderedCommitter[str] = OrderedCommitter([0, 1, 2, 3, 5], committed.append)
    assert c.finish(2, "c") == 0
    assert c.finish(1, "b") == 0
    assert committed == [] and c.buffered == [1, 2]
    assert c.finish(0, "a") == 3
    assert committed == ["a", "b", "c"]
    assert c.finish(5, "f") == 0
    assert c.finish(3, "d") == 2
    assert committed == ["a", "b", "c", "d", "f"]
    assert c.outstanding == [] and c.committed == 5


def test_unknown_or_repeated_indices_raise() -> None:
    c: OrderedCommitter[int] = OrderedCommitter([4, 6], lambda _: None)
    with pytest.raises(ValueError, match="not outstanding"):
        c.finish(5, 0)
    c.finish(6, 0)
    with pytest.raises(ValueError, match="already finished"):
        c.finish(6, 0)
    c.finish(4, 0)
    with pytest.raises(ValueError, match="not outstanding"):
        c.finish(4, 0)


def test_flush_commits_buffered_items_past_gaps_in_order() -> None:
    committed: list[int] = []
    c: OrderedCommitter[int] = OrderedCommitter(range(6), committed.append)
    c.finish(4, 4)
    c.finish(2, 2)
    assert c.flush() == 2
    assert committed == [2, 4]
    assert c.outstanding == [0, 1, 3, 5]


def test_a_failed_commit_keeps_the_item_at_the_head() -> None:
    committed: list[int] = []
    fail = {1}

    def commit(item: int) -> None:
        if item in fail:
            fail.discard(item)
            raise RuntimeError("database down")
        committed.append(item)

    c: OrderedCommitter[int] = OrderedCommitter(range(3), commit)
    c.finish(2, 2)
    c.finish(0, 0)
    with pytest.raises(RuntimeError):
        c.finish(1, 1)
    assert committed == [0] and c.buffered == [1, 2]
    assert c.flush() == 2
    assert committed == [0, 1, 2]


def test_threads_finishing_in_random_order_commit_in_index_order() -> None:
    committed: list[int] = []
    order = list(range(200))
    random.Random(3).shuffle(order)
    c: OrderedCommitter[int] = OrderedCommitter(range(200), committed.append)
    chunks = [order[i::4] for i in range(4)]
    threads = [threading.Thread(target=lambda ch=ch: [c.finish(i, i) for i in ch]) for ch in chunks]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert committed == list(range(200))
