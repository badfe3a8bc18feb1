"""Live snapshots in the store: one row per match in play, replaced by each write, read with
the match's status, and gone once the player clears it."""

from __future__ import annotations

import pytest

from tournaments.errors import UnknownMatchError
from tournaments.store import LiveRead, Store


def test_a_snapshot_is_replaced_read_with_the_status_and_cleared(db_url: str) -> None:
    with Store(db_url) as store:
        ids = [store.add_bot(name)[0].id or 0 for name in ("a", "b", "c")]
        match = store.matches(store.create_tournament("knaves", ids, seed=3).id or 0)[0]
        mid = match.id or 0
        assert store.read_live(mid).snapshot is None
        store.start_match(mid)
        first = {"step": 1, "moves": [{"seat": 0, "label": "play:2H"}]}
        store.publish_live(mid, 1, first)
        assert store.read_live(mid) == LiveRead("running", first)  # the first write, read
        store.publish_live(mid, 2, {"step": 2, "moves": []})
        read = store.read_live(mid)
        assert (read.status, read.snapshot) == ("running", {"step": 2, "moves": []})
        other = store.matches(match.tournament_id)[1].id or 0
        assert store.read_live(other).snapshot is None  # one row per match
        store.clear_live(mid)
        assert store.read_live(mid).snapshot is None
        store.clear_live(mid)  # twice: nothing to remove, no error
        with pytest.raises(UnknownMatchError):
            store.read_live(10_000)
