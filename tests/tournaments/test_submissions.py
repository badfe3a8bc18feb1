"""Submissions in the store on SQLite and PostgreSQL: stored with their archive or not at all,
accepted into a bot of their author, and versions that replace a bot in future schedules
while the old one keeps its matches and ratings, the new one starting from its mu."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import pytest
from sqlmodel import Session, func, select

from tournaments.errors import (
    AuthorStateError,
    BotNameError,
    SubmissionError,
    UnknownSubmissionError,
)
from tournaments.models import BotArchive, Submission, SubmissionState
from tournaments.ratings import DEFAULT_SIGMA, SeatOutcome
from tournaments.store import Store

GAME = "knaves"


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    with Store(db_url) as s:
        yield s


def archive(text: str) -> BotArchive:
    data = text.encode()
    return BotArchive(digest=hashlib.sha256(data).hexdigest(), data=data, size=len(data))


def rows(store: Store, model: type) -> int:
    with Session(store.engine) as session:
        return int(session.exec(select(func.count()).select_from(model)).one())


def submit(store: Store, author_id: int, name: str, code: str = "v1") -> Submission:
    return store.receive_submission(author_id, name, [GAME], "python3 bot.py", None, archive(code))


def author(store: Store, name: str) -> int:
    made, _ = store.add_author(name)
    assert made.id is not None
    return made.id


def play_round(store: Store, bots: list[str], first: str) -> None:
    """A round robin of the bots, each match won by `first` (when seated), recorded."""
    tournament = store.create_tournament(GAME, bots, seed=3)
    assert tournament.id is not None
    for match in store.pending_matches(tournament.id):
        assert match.id is not None
        names = [store.get_bot(b, include_removed=True).name for b in match.seats]
        scores = [10 if n == first else 0 for n in names]
        store.record_result(match.id, [SeatOutcome(s) for s in scores])


def test_a_submission_is_stored_with_its_archive_and_refused_whole(store: Store) -> None:
    ann = author(store, "ann")
    sent = submit(store, ann, "alpha")
    assert (sent.state, sent.name, sent.games, sent.bot_id) == ("received", "alpha", [GAME], None)
    assert store.bot_archive(sent.digest) == b"v1"
    before = (rows(store, Submission), rows(store, BotArchive))
    with pytest.raises(BotNameError, match="bot name 'bad name' must be"):
        submit(store, ann, "bad name", "other code")
    with pytest.raises(SubmissionError, match="at least one game"):
        store.receive_submission(ann, "beta", [], "python3 bot.py", None, archive("x"))
    with pytest.raises(SubmissionError, match="needs the command"):
        store.receive_submission(ann, "beta", [GAME], "  ", None, archive("x"))
    store.add_bot("house1")  # the organizer's
    with pytest.raises(BotNameError, match="'house1' is taken by another author's bot"):
        submit(store, ann, "house1", "y")
    store.disable_author("ann")
    with pytest.raises(AuthorStateError, match="disabled"):
        submit(store, ann, "gamma", "z")
    assert (rows(store, Submission), rows(store, BotArchive)) == before


def test_states_move_on_and_only_the_author_sees_a_submission(store: Store) -> None:
    ann, bea = author(store, "ann"), author(store, "bea")
    first, second = submit(store, ann, "alpha"), submit(store, ann, "beta", "other")
    assert first.id is not None and second.id is not None
    store.set_submission_state(first.id, SubmissionState.TESTING, "playing")
    assert [s.id for s in store.unfinished_submissions()] == [first.id, second.id]
    store.set_submission_state(second.id, SubmissionState.REJECTED, "FAIL: crashed")
    assert [s.id for s in store.unfinished_submissions()] == [first.id]
    assert store.submission(first.id, ann).detail == "playing"
    with pytest.raises(UnknownSubmissionError):
        store.submission(first.id, bea)
    with pytest.raises(ValueError, match="accept_submission"):
        store.set_submission_state(first.id, SubmissionState.ACCEPTED, "")
    bot = store.accept_submission(first.id, "PASS")
    assert (bot.name, bot.version, bot.author_id, bot.code_digest) == (
        "alpha",
        1,
        ann,
        first.digest,
    )
    with pytest.raises(SubmissionError, match="accepted already"):
        store.accept_submission(first.id, "PASS")
    mine = store.authors_bots(ann)
    assert [b.name for b in mine.bots] == ["alpha"]
    assert [s.id for s in mine.submissions] == [second.id, first.id]
    assert store.authors_bots(bea).bots == [] and store.authors_bots(bea).submissions == []
    with pytest.raises(BotNameError, match="none of your bots"):
        store.authors_bot(bea, "alpha")


def test_a_new_version_replaces_the_old_in_new_schedules_from_its_mu(store: Store) -> None:
    ann = author(store, "ann")
    for name in ("h1", "h2"):
        store.add_bot(name)
    v1 = submit(store, ann, "alpha")
    assert v1.id is not None
    old = store.accept_submission(v1.id, "PASS")
    play_round(store, ["alpha", "h1", "h2"], first="alpha")
    rated = store.ratings(GAME)[old.id or 0]
    assert rated.matches == 6 and rated.mu > 30

    v2 = submit(store, ann, "alpha", "v2")
    assert v2.id is not None
    new = store.accept_submission(v2.id, "PASS")
    assert (new.name, new.version, new.prior_mu) == ("alpha", 2, {GAME: rated.mu})
    kept = store.get_bot(old.id or 0, include_removed=True)
    assert kept.name == "alpha@v1" and kept.removed is not None
    assert store.ratings(GAME)[old.id or 0].matches == 6  # its matches and rating stay
    board = {r.bot: r for r in store.rankings(GAME)}
    assert "alpha@v1" not in board
    assert (board["alpha"].mu, board["alpha"].sigma, board["alpha"].matches) == (
        rated.mu,
        DEFAULT_SIGMA,
        0,
    )
    # The next schedule takes the new version; a recompute starts it where acceptance did.
    play_round(store, ["alpha", "h1", "h2"], first="h1")
    history = [h for h in store.rating_history(GAME, new.id) if h.bot_id == new.id]
    assert (history[0].mu_before, history[0].sigma_before) == (rated.mu, DEFAULT_SIGMA)
    live = store.ratings(GAME)
    store.recompute(GAME)
    again = store.ratings(GAME)
    for bot_id in (old.id, new.id):
        assert bot_id is not None
        assert again[bot_id].mu == pytest.approx(live[bot_id].mu, abs=1e-9)
        assert again[bot_id].sigma == pytest.approx(live[bot_id].sigma, abs=1e-9)


def test_a_submitted_bot_that_never_played_is_retired_and_its_name_numbers_on(
    store: Store,
) -> None:
    ann = author(store, "ann")
    first = submit(store, ann, "alpha", "c1")
    assert first.id is not None
    v1 = store.accept_submission(first.id, "knaves: PASS")
    second = submit(store, ann, "alpha", "c2")
    assert second.id is not None
    v2 = store.accept_submission(second.id, "knaves: PASS")
    # Neither played: the submission still names its bot, which is retired, not deleted.
    assert store.remove_bot(v2.id or 0) == "retired"
    assert store.submission(second.id).bot_id == v2.id
    with pytest.raises(BotNameError, match="'alpha' is taken by another author's bot"):
        submit(store, author(store, "bob"), "alpha", "b1")
    third = submit(store, ann, "alpha", "c3")
    assert third.id is not None
    v3 = store.accept_submission(third.id, "knaves: PASS")
    assert v3.version == 3
    names = {b.id: (b.name, b.version, b.removed is not None) for b in store.authors_bots(ann).bots}
    assert names == {
        v1.id: ("alpha@v1", 1, True),
        v2.id: ("alpha@v2", 2, True),
        v3.id: ("alpha", 3, False),
    }
    store.add_bot("house1")  # no submission made it: deleted
    assert store.remove_bot("house1") == "deleted"


def test_a_submission_keeps_what_was_sent_and_refusals_say_exactly_why(store: Store) -> None:
    ann = author(store, "ann")
    built = store.receive_submission(ann, "alpha", [GAME], "./bot", "make bot", archive("same"))
    plain = store.receive_submission(ann, "beta", [GAME], "python3 b.py", "", archive("same"))
    assert (built.build, built.command, built.detail) == (
        "make bot",
        "./bot",
        "waiting to be tested",
    )
    assert (plain.build, plain.command, plain.digest) == (None, "python3 b.py", built.digest)
    assert rows(store, BotArchive) == 1  # one archive for the same code sent twice
    with pytest.raises(SubmissionError) as no_game:
        store.receive_submission(ann, "c", [], "x", None, archive("x"))
    with pytest.raises(SubmissionError) as no_command:
        store.receive_submission(ann, "c", [GAME], " ", None, archive("x"))
    messages = [str(no_game.value), str(no_command.value)]
    store.disable_author("ann")
    with pytest.raises(AuthorStateError) as disabled:
        submit(store, ann, "gamma", "z")
    with pytest.raises(ValueError) as accepting:
        store.set_submission_state(built.id or 0, SubmissionState.ACCEPTED, "")
    with pytest.raises(UnknownSubmissionError) as unknown:
        store.submission(10_000)
    assert [*messages, str(disabled.value), str(accepting.value), str(unknown.value)] == [
        "a submission names at least one game",
        "a submission needs the command that starts the bot",
        "this author is disabled: they can submit no bots",
        "accept a submission with accept_submission: it makes the bot",
        "no submission 10000",
    ]


def test_an_accepted_build_runs_its_built_archive_with_the_submitted_command(
    store: Store,
) -> None:
    ann = author(store, "ann")
    sent = store.receive_submission(ann, "alpha", [GAME], "./bot", "make", archive("source"))
    assert sent.id is not None
    bot = store.accept_submission(sent.id, "built in 1 s\nPASS", archive("built tree"))
    assert (bot.command, bot.code_digest) == ("./bot", archive("built tree").digest)
    assert store.bot_archive(bot.code_digest or "") == b"built tree"
    assert store.bot_archive(sent.digest) == b"source"  # the submission's own stays


def test_an_authors_bots_newest_first_found_by_name_and_counted(store: Store) -> None:
    ann, bea = author(store, "ann"), author(store, "bea")
    since = store.get_author("ann").created
    bots = []
    for name in ("alpha", "beta", "gamma"):
        sent = submit(store, ann, name, name)
        assert sent.id is not None
        bots.append(store.accept_submission(sent.id, "PASS"))
    submit(store, bea, "delta", "delta")
    assert [b.id for b in store.authors_bots(ann).bots] == [b.id for b in reversed(bots)]
    assert store.authors_bot(ann, "beta").id == bots[1].id
    store.remove_bot("beta")
    with pytest.raises(BotNameError) as retired:
        store.authors_bot(ann, "beta")
    assert str(retired.value) == "bot name 'beta' is none of your bots"
    assert store.authors_bot(ann, "beta", include_removed=True).id == bots[1].id
    for who, name in ((bea, "alpha"), (ann, "delta"), (ann, "nobody")):
        with pytest.raises(BotNameError, match=f"^bot name '{name}' is none of your bots$"):
            store.authors_bot(who, name)
    assert store.author_activity(ann, since) == (3, 2)  # three sent, two in play
    assert store.author_activity(bea, since) == (1, 0)
    later = max(s.created for s in store.authors_bots(ann).submissions)
    assert store.author_activity(ann, later) == (1, 2)  # the last one sent at that instant
    assert store.author_activity(author(store, "cid"), since) == (0, 0)
