"""The web page's read-only queries of bot versions on a SQLite file: every version of an
author's bot name with its accepted verdict's first line and date, and each bot's version and
author for the leaderboards; a rejected submission's detail is never read."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlmodel import Session, select

from tournaments.models import HOUSE_AUTHOR, Bot, BotArchive, SubmissionState
from tournaments.store import Store
from tournaments.store.web_queries import base_name, bot_tags, bot_versions, verdict_line

GAME = "knaves"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(f"sqlite:///{tmp_path / 'cs.db'}") as s:
        yield s


def accept(store: Store, author_id: int, name: str, detail: str, code: str) -> Bot:
    """Submit a bot and accept it with this verdict."""
    data = code.encode()
    archive = BotArchive(digest=hashlib.sha256(data).hexdigest(), data=data, size=len(data))
    sent = store.receive_submission(author_id, name, [GAME], "python3 bot.py", None, archive)
    assert sent.id is not None
    return store.accept_submission(sent.id, detail)


def reject(store: Store, author_id: int, name: str, detail: str, code: str) -> None:
    """Submit a bot and reject it with this detail."""
    data = code.encode()
    archive = BotArchive(digest=hashlib.sha256(data).hexdigest(), data=data, size=len(data))
    sent = store.receive_submission(author_id, name, [GAME], "python3 bot.py", None, archive)
    assert sent.id is not None
    store.set_submission_state(sent.id, SubmissionState.REJECTED, detail)


def author(store: Store, name: str) -> int:
    made, _ = store.add_author(name)
    assert made.id is not None
    return made.id


def test_base_name_drops_only_a_version_suffix() -> None:
    assert base_name("alpha@v1") == "alpha"
    assert base_name("alpha@v12") == "alpha"
    assert base_name("alpha") == "alpha"
    assert base_name("alpha@vx") == "alpha@vx"
    assert base_name("v1.2") == "v1.2"


def test_verdict_line_is_the_first_line_after_a_build_time() -> None:
    assert verdict_line("knaves: PASS: 3 matches\nkill: PASS: 2") == "knaves: PASS: 3 matches"
    assert verdict_line("built in 1.2 s\nknaves: PASS: 3 matches") == "knaves: PASS: 3 matches"
    assert verdict_line("built in 1.2 s") == "built in 1.2 s"  # no verdict after it
    assert verdict_line("") == ""
    assert verdict_line("x" * 500) == "x" * 200


def test_every_version_of_a_name_newest_first_with_its_verdict(store: Store) -> None:
    carol = author(store, "carol")
    v1 = accept(store, carol, "alpha", "knaves: PASS: first\nmore", "v1")
    v2 = accept(store, carol, "alpha", "built in 2.0 s\nknaves: PASS: second", "v2")
    reject(store, carol, "alpha", "knaves: FAIL\nTraceback: SECRET-STDERR", "v3")
    v3 = accept(store, carol, "alpha", "knaves: PASS: third", "v4")
    accept(store, carol, "alphabet", "knaves: PASS: other name", "a")
    accept(store, carol, "alpha_x", "knaves: PASS: other name", "b")
    current = store.get_bot("alpha")
    assert current.id == v3.id and current.version == 3
    versions = bot_versions(store, current)
    assert [(v.name, v.version, v.retired) for v in versions] == [
        ("alpha", 3, False),
        ("alpha@v2", 2, True),
        ("alpha@v1", 1, True),
    ]
    assert [v.bot_id for v in versions] == [v3.id, v2.id, v1.id]
    assert [v.verdict for v in versions] == [
        "knaves: PASS: third",
        "knaves: PASS: second",
        "knaves: PASS: first",
    ]
    submitted = {s.bot_id: s.updated for s in store.authors_bots(carol).submissions if s.bot_id}
    assert [v.accepted for v in versions] == [submitted[b.id or 0] for b in (v3, v2, v1)]
    # An old version's page lists the same versions.
    old = store.get_bot("alpha@v1", include_removed=True)
    assert bot_versions(store, old) == versions
    assert all("SECRET" not in v.verdict for v in versions)


def test_another_authors_bot_is_no_version_and_a_house_bot_has_one(store: Store) -> None:
    carol, dave = author(store, "carol"), author(store, "dave")
    accept(store, carol, "alpha", "knaves: PASS: carol's", "c1")
    accept(store, dave, "beta", "knaves: PASS: dave's", "d1")
    house, _ = store.add_bot("house1")
    versions = bot_versions(store, store.get_bot("alpha"))
    assert [v.name for v in versions] == ["alpha"]
    (only,) = bot_versions(store, house)
    assert (only.name, only.version, only.verdict, only.retired) == ("house1", 1, "", False)
    assert only.accepted == house.created


def test_bot_tags_name_version_and_author(store: Store) -> None:
    carol = author(store, "carol")
    v1 = accept(store, carol, "alpha", "knaves: PASS", "v1")
    v2 = accept(store, carol, "alpha", "knaves: PASS", "v2")
    house, _ = store.add_bot("house1")
    assert v1.id is not None and v2.id is not None and house.id is not None
    tags = bot_tags(store, [v1.id, v2.id, house.id, v2.id])
    assert {i: (t.version, t.author) for i, t in tags.items()} == {
        v1.id: (1, "carol"),
        v2.id: (2, "carol"),
        house.id: (1, HOUSE_AUTHOR),
    }
    assert bot_tags(store, []) == {}


def test_a_bot_with_no_author_has_its_own_versions(store: Store) -> None:
    ownerless, _ = store.add_bot("orphan")
    store.add_bot("orphan2")
    with Session(store.engine) as session:  # the column allows it: a bot no author row owns
        for name in ("orphan", "orphan2"):
            bot = session.exec(select(Bot).where(Bot.name == name)).one()
            bot.author_id = None
            session.add(bot)
        session.commit()
    (only,) = bot_versions(store, store.get_bot("orphan"))
    assert (only.bot_id, only.name, only.verdict) == (ownerless.id, "orphan", "")
