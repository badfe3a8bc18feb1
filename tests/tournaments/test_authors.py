"""Authors on SQLite and PostgreSQL: a key shown once and stored hashed as a bot token is, a
wrong or disabled key refused, bots of the house author by default, a disabled author's bots
kept out of new tournaments (old ones play on), and an old database's bots given to house."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url
from sqlmodel import Session, func, select

from tournaments.db import upgrade_schema
from tournaments.errors import (
    AuthorDisabledError,
    AuthorNameError,
    AuthorStateError,
    UnknownAuthorError,
)
from tournaments.models import HOUSE_AUTHOR, Author, Match, Tournament
from tournaments.ratings import SeatOutcome
from tournaments.store import Store, hash_token

from .test_migrations import first_schema_database

GAME = "knaves"  # 3 seats


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    with Store(db_url) as s:
        yield s


def count(store: Store, model: type) -> int:
    with Session(store.engine) as session:
        return int(session.exec(select(func.count()).select_from(model)).one())


def sqlite_bytes(url: str) -> bytes:
    """The SQLite file with its write-ahead log: every byte the database holds."""
    path = Path(make_url(url).database or "")
    return b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists())


def test_a_key_is_returned_once_stored_only_hashed_and_finds_its_author(db_url: str) -> None:
    with Store(db_url) as store:
        author, key = store.add_author("ann")
        assert re.fullmatch(r"[0-9a-f]{64}", key)
        with Session(store.engine) as session:
            stored = session.exec(select(Author.key_hash)).all()
        assert stored == [hash_token(key)]
        found = store.author_for_key(key)
        assert found is not None and found.id == author.id and found.name == "ann"
        assert not found.disabled
        assert store.author_for_key(key[:-1] + ("0" if key[-1] != "0" else "1")) is None
        assert store.author_for_key("") is None
        # A bot's token is not an author key, though both are made and hashed alike.
        _, token = store.add_bot("annbot", author="ann")
        assert store.author_for_key(token) is None
        assert store.find_bot_by_token(key) is None
    if db_url.startswith("sqlite"):
        held = sqlite_bytes(db_url)
        assert hash_token(key).encode() in held  # the file is the one written...
        assert key.encode() not in held  # ...and the plain key is nowhere in it


def test_bot_add_without_an_author_gives_the_bot_to_the_house_author_made_on_demand(
    store: Store,
) -> None:
    assert store.list_authors() == []
    store.add_bot("mine")
    store.add_author("ann")
    store.add_bot("hers", author="ann")
    store.add_bot("mine-too")
    rows = {r.author.name: r.bots for r in store.list_authors()}
    assert rows == {"ann": ["hers"], HOUSE_AUTHOR: ["mine", "mine-too"]}
    house = store.get_author(HOUSE_AUTHOR)
    assert house.key_hash is None and not house.disabled  # no key can be the house's
    assert count(store, Author) == 2  # one house author, not one per bot
    names = store.author_names()
    assert {b.name: names[b.author_id or 0] for b in store.list_bots()} == {
        "hers": "ann",
        "mine": HOUSE_AUTHOR,
        "mine-too": HOUSE_AUTHOR,
    }
    assert store.bot_profile("hers").author == "ann"
    assert store.bot_profile("mine").author == HOUSE_AUTHOR
    with pytest.raises(UnknownAuthorError, match="no author 'bob'; registered authors: ann"):
        store.add_bot("orphan", author="bob")


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("has space", "must be 1-64 letters"),
        ("-dash", "must be 1-64 letters"),
        ("x" * 65, "must be 1-64 letters"),
        ("", "must be 1-64 letters"),
        (HOUSE_AUTHOR, "is reserved for the organizer's own bots"),
    ],
)
def test_a_bad_author_name_is_refused_and_nothing_stored(
    tmp_path: Path, name: str, reason: str
) -> None:
    with Store(f"sqlite:///{tmp_path / 'a.db'}") as store:
        with pytest.raises(AuthorNameError, match=re.escape(f"author name {name!r} {reason}")):
            store.add_author(name)
        assert count(store, Author) == 0


def test_a_duplicate_name_is_refused_and_an_unknown_one_is_named(store: Store) -> None:
    store.add_author("ann")
    with pytest.raises(AuthorNameError, match="author name 'ann' is already taken"):
        store.add_author("ann")
    assert count(store, Author) == 1
    with pytest.raises(UnknownAuthorError, match="no author 'bob'; registered authors: ann"):
        store.disable_author("bob")
    with pytest.raises(UnknownAuthorError, match="no author 'bob'"):
        store.get_author("bob")


def test_a_disabled_author_is_refused_and_their_bots_enter_no_new_tournament(
    store: Store,
) -> None:
    _, key = store.add_author("ann")
    store.add_author("cy")
    for name in ("a1", "a2"):
        store.add_bot(name, author="ann")
    store.add_bot("c1", author="cy")
    for name in ("h1", "h2"):
        store.add_bot(name)
    # Created before the author is disabled: plays on as scheduled (docs/storage.md).
    before = store.create_tournament(GAME, ["h1", "a1", "c1"], seed=5)
    assert before.id is not None

    assert store.disable_author("ann") is True
    assert store.disable_author("ann") is False  # already: nothing changes
    assert store.author_for_key(key) is None
    assert store.get_author("ann").disabled
    with pytest.raises(AuthorStateError, match="'ann' is disabled"):
        store.add_bot("a3", author="ann")

    tournaments, matches = count(store, Tournament), count(store, Match)
    with pytest.raises(
        AuthorDisabledError,
        match="bot 'a2' cannot enter a new tournament: its author 'ann' is disabled",
    ):
        store.create_tournament(GAME, ["h1", "h2", "a2", "c1"], seed=6)
    assert (count(store, Tournament), count(store, Match)) == (tournaments, matches)
    # The others still make a tournament without them.
    assert store.create_tournament(GAME, ["h1", "h2", "c1"], seed=6).id is not None

    # The tournament scheduled before plays on with ann's bot: its matches are recorded.
    pending = store.pending_matches(before.id)
    assert pending
    for match in pending:
        assert match.id is not None
        store.record_result(match.id, [SeatOutcome(3), SeatOutcome(2), SeatOutcome(1)])
    assert store.get_tournament(before.id).status == "finished"

    with pytest.raises(AuthorStateError, match="the house author cannot be disabled"):
        store.disable_author(HOUSE_AUTHOR)
    assert [(r.author.name, r.author.disabled) for r in store.list_authors()] == [
        ("ann", True),
        ("cy", False),
        (HOUSE_AUTHOR, False),
    ]


def test_an_old_database_upgrades_with_its_bots_under_the_house_author(db_url: str) -> None:
    first_schema_database(db_url)  # bots ada, bob and the retired cy, from the first release
    upgrade_schema(db_url)
    with Store(db_url) as store:
        assert [(r.author.name, r.bots) for r in store.list_authors()] == [
            (HOUSE_AUTHOR, ["ada", "bob"])
        ]
        names = store.author_names()
        bots = store.list_bots(include_removed=True)
        assert {b.name: names[b.author_id or 0] for b in bots} == dict.fromkeys(
            ("ada", "bob", "cy"), HOUSE_AUTHOR
        )
        assert store.get_author(HOUSE_AUTHOR).key_hash is None
        # The upgraded database goes on: a new bot joins the same house author, an author
        # is added, and the old bots still make a tournament.
        store.add_bot("dee")
        store.add_author("ann")
        assert count(store, Author) == 2
        assert store.bot_profile("dee").author == HOUSE_AUTHOR
        assert store.create_tournament(GAME, ["ada", "bob", "dee"], seed=1).id is not None


def test_authors_are_listed_by_name_with_their_bots_by_name(store: Store) -> None:
    for name in ("zed", "ann", "bob"):  # made out of name order
        store.add_author(name)
    for bot, owner in (("b2", "ann"), ("b1", "ann"), ("b3", "zed"), ("gone", "zed")):
        store.add_bot(bot, author=owner)
    store.add_bot("h2")
    store.add_bot("h1")
    store.remove_bot("gone")
    listed = [(row.author.name, row.bots) for row in store.list_authors()]
    assert listed == [
        ("ann", ["b1", "b2"]),
        ("bob", []),
        (HOUSE_AUTHOR, ["h1", "h2"]),
        ("zed", ["b3"]),
    ]
    assert sorted(store.author_names().values()) == ["ann", "bob", HOUSE_AUTHOR, "zed"]


def test_a_bot_with_no_author_is_listed_under_the_house_author(store: Store) -> None:
    store.add_author("ann")
    store.add_bot("orphan")  # makes the house author, which then owns no bot of its own
    with Session(store.engine) as session:  # the column allows it: a bot no author row owns
        session.connection().exec_driver_sql("UPDATE bots SET author_id = NULL")
        session.commit()
    listed = [(row.author.name, row.bots) for row in store.list_authors()]
    assert listed == [("ann", []), (HOUSE_AUTHOR, ["orphan"])]


def test_a_name_the_database_refuses_as_taken_is_reported_as_taken(store: Store) -> None:
    """Two servers adding one name at once: the second's check saw none, its insert fails."""
    store.add_author("ann")
    with Session(store.engine) as session:  # stands in for the other server's row
        session.connection().exec_driver_sql(
            "CREATE UNIQUE INDEX authors_name_folded ON authors (lower(name))"
        )
        session.commit()
    with pytest.raises(AuthorNameError) as taken:
        store.add_author("ANN")
    assert str(taken.value) == "author name 'ANN' is already taken"
    assert taken.value.name == "ANN"
    assert count(store, Author) == 1


def test_the_house_author_cannot_be_disabled_and_says_how_to_remove_its_bots(
    store: Store,
) -> None:
    with pytest.raises(AuthorStateError) as refused:
        store.disable_author(HOUSE_AUTHOR)
    assert str(refused.value) == (
        f"the {HOUSE_AUTHOR} author cannot be disabled: it owns the organizer's own bots; "
        "remove one with `cardshark bot remove NAME`"
    )
