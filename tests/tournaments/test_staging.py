"""Workers' staged results: recorded in schedule order whatever order they were staged in,
once each, and never for an attempt that was voided meanwhile."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import create_engine

from tournaments.errors import UnknownMatchError, UnknownTournamentError
from tournaments.models import MatchStatus
from tournaments.ratings import SeatOutcome
from tournaments.store import Store


def outcome(index: int) -> list[SeatOutcome]:
    return [SeatOutcome(float((index + seat) % 3), int(seat == 1), False) for seat in range(3)]


def tournament(store: Store) -> int:
    ids = [store.add_bot(name)[0].id for name in ("a", "b", "c", "d")]
    created = store.create_tournament("knaves", [i for i in ids if i is not None], seed=3)
    assert created.id is not None
    return created.id


def history(store: Store) -> list[tuple[int, int, float, float]]:
    return [
        (h.match_id, h.bot_id, h.mu_after, h.sigma_after) for h in store.rating_history("knaves")
    ]


def test_results_staged_in_reverse_are_recorded_in_schedule_order_as_one_process_would(
    db_url: str, tmp_path: Path
) -> None:
    with Store(f"sqlite:///{tmp_path / 'one.db'}") as one:
        tid = tournament(one)
        for match in one.pending_matches(tid):
            assert match.id is not None
            one.record_result(match.id, outcome(match.schedule_index))
        expected = history(one)

    with Store(db_url) as store:
        tid = tournament(store)
        matches = store.pending_matches(tid)
        *later, first = list(reversed(matches))
        for match in later:
            assert match.id is not None
            assert store.stage(match.id, outcome(match.schedule_index), worker="w2")
            assert store.commit_staged(tid) == 0  # waiting for the first match
        assert first.id is not None
        assert store.stage(first.id, outcome(first.schedule_index), worker="w1")
        assert not store.stage(first.id, outcome(first.schedule_index))  # staged once
        assert store.commit_staged(tid) == len(matches)
        assert store.commit_staged(tid) == 0
        assert all(m.status == MatchStatus.FINISHED.value for m in store.matches(tid))
        assert history(store) == expected


def test_a_voided_attempt_is_never_staged_and_its_replay_is(db_url: str) -> None:
    with Store(db_url) as store:
        tid = tournament(store)
        match = store.current_attempt(tid, 0)
        assert match.id is not None
        store.start_match(match.id)
        again = store.void_match(match.id, "worker lost")
        assert store.current_attempt(tid, 0).id == again.id
        assert not store.stage(match.id, outcome(0))  # the slow worker's late result
        assert not store.is_staged(match.id)
        assert again.id is not None
        assert not store.is_staged(again.id)
        assert store.stage(again.id, outcome(0))
        assert store.is_staged(again.id)
        assert store.commit_staged(tid) == 1
        assert store.get_match(again.id).status == MatchStatus.FINISHED.value
        assert store.get_match(match.id).status == MatchStatus.VOIDED.value


def test_starting_and_staging_a_match_never_wait_for_another_process_recording(
    postgres_database: str,
) -> None:
    with Store(postgres_database) as store:
        tid = tournament(store)
        match = store.current_attempt(tid, 0)
        assert match.id is not None
        match_id = match.id
        # Another process is recording: it holds the ratings lock, as every rating write does.
        other = create_engine(postgres_database.replace("postgresql://", "postgresql+psycopg://"))
        with other.connect() as recording:
            recording.exec_driver_sql("LOCK TABLE ratings IN SHARE ROW EXCLUSIVE MODE")
            done: dict[str, bool] = {}

            def start_and_stage() -> None:
                store.start_match(match_id)
                done["staged"] = store.stage(match_id, outcome(0))

            worker = threading.Thread(target=start_and_stage)
            worker.start()
            worker.join(timeout=60)
            stuck = worker.is_alive()
            committing = threading.Thread(target=store.commit_staged, args=(tid,))
            if not stuck:  # recording, unlike them, does queue behind the lock
                committing.start()
                waiting = (
                    "SELECT count(*) FROM pg_locks WHERE NOT granted "
                    "AND relation = 'ratings'::regclass"
                )
                while recording.exec_driver_sql(waiting).scalar() == 0:
                    assert committing.is_alive(), "recording did not wait for the lock"
                    time.sleep(0.01)  # polling pg_locks, not timing anything
            recording.rollback()  # the other process is done
        worker.join()
        other.dispose()
        assert not stuck, "starting or staging a match waited for the ratings lock"
        assert done == {"staged": True}
        committing.join()
        assert store.get_match(match_id).status == MatchStatus.FINISHED.value


def test_a_schedule_index_with_no_match_is_named_with_its_tournament(db_url: str) -> None:
    with Store(db_url) as store:
        tid = tournament(store)
        with pytest.raises(UnknownMatchError) as missing:
            store.current_attempt(tid, 999)
        assert str(missing.value) == f"no match '999 of tournament {tid}'"
        with pytest.raises(UnknownTournamentError):
            store.current_attempt(tid + 1, 0)
