"""Bot versions on the web pages, requested in process from the web app over a SQLite file:
a bot page names its author and version and lists every version with its acceptance date and
verdict's first line; a replaced version's page links the one that replaced it; leaderboards
and standings show "alpha v2" and the author; what an author wrote is shown as text, and a
rejected submission's detail (the bot's stderr) is on no page."""

from __future__ import annotations

import asyncio
import hashlib
import re
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from html import escape
from typing import Any

import pytest
from starlette.types import ASGIApp, Message

from server.web.app import make_app
from tests.server.webkit import play_match
from tournaments.models import BotArchive, SubmissionState
from tournaments.store import Store

GAME = "knaves"
HOSTILE = "<script>alert(1)</script>"
SECRET = "SECRET-STDERR-of-carol"  # in rejected submissions' details only
WHEN = "%Y-%m-%d %H:%M"


def get(app: ASGIApp, path: str) -> tuple[int, str]:
    """GET a path from the ASGI app in this process: the status and the body's text."""
    messages: list[Message] = []
    route, _, query = path.partition("?")

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        messages.append(message)

    scope: dict[str, Any] = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": urllib.parse.unquote(route),
        "raw_path": route.encode(),
        "root_path": "",
        "query_string": query.encode(),
        "headers": [(b"host", b"testserver")],
        "server": ("testserver", 80),
        "client": ("127.0.0.1", 1),
    }

    async def call() -> None:
        await app(scope, receive, send)

    asyncio.run(call())
    status = next(m["status"] for m in messages if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.response.body")
    return int(status), body.decode()


def page(app: ASGIApp, path: str) -> str:
    """A page's HTML, which must answer 200."""
    status, html = get(app, path)
    assert status == 200, (path, status, html[:300])
    return html


def text(html: str) -> str:
    """An HTML fragment's text, a space between cells, whitespace collapsed (entities kept)."""
    return " ".join(re.sub(r"<[^>]+>", "", re.sub(r"</t[dh]>", " ", html)).split())


def element(html: str, tag: str, ident: str) -> str:
    """The inside of the first `<tag id="ident">…</tag>` (no nesting of the same tag)."""
    found = re.search(rf'<{tag} id="{ident}"[^>]*>(.*?)</{tag}>', html, re.S)
    assert found, f"no {tag}#{ident}"
    return found.group(1)


def rows(table: str) -> list[str]:
    """A table's rows after its header, each as its HTML."""
    return re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S)[1:]


def archive(code: str) -> BotArchive:
    data = code.encode()
    return BotArchive(digest=hashlib.sha256(data).hexdigest(), data=data, size=len(data))


@dataclass(frozen=True)
class Site:
    """The app, its store and the tournaments alpha v1 and alpha v2 played."""

    app: ASGIApp
    store: Store
    first: int
    second: int


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    db = tmp_path_factory.mktemp("versions") / "cs.db"
    store = Store(f"sqlite:///{db}")
    houses = [store.add_bot(f"house{i}")[0].name for i in (1, 2)]
    carol, _ = store.add_author("carol")
    assert carol.id is not None

    def submit(name: str, code: str) -> int:
        sent = store.receive_submission(
            carol.id or 0, name, [GAME], "python3 b.py", None, archive(code)
        )
        assert sent.id is not None
        return sent.id

    store.accept_submission(submit("alpha", "v1"), f"knaves: PASS: first {HOSTILE}\nline two")
    first = store.create_tournament(GAME, [*houses, "alpha"], seed=3).id or 0
    for match in store.matches(first):
        play_match(store, match.id or 0)
    rejected = submit("alpha", "bad")
    store.set_submission_state(rejected, SubmissionState.REJECTED, f"knaves: FAIL\n{SECRET}")
    store.accept_submission(submit("alpha", "v2"), "built in 1.5 s\nknaves: PASS: second")
    never = submit("gamma", "never")
    store.set_submission_state(never, SubmissionState.REJECTED, f"build failed\n{SECRET}")
    second = store.create_tournament(GAME, [*houses, "alpha"], seed=4).id or 0
    for match in store.matches(second):
        play_match(store, match.id or 0)
    yield Site(make_app(store), store, first, second)
    store.close()


def test_a_bot_page_names_its_author_version_and_every_version(site: Site) -> None:
    store = site.store
    html = page(site.app, "/bots/alpha")
    assert text(element(html, "p", "about")).startswith("by carol, version 2;")
    assert 'id="replaced"' not in html
    versions = rows(element(html, "table", "versions"))
    assert len(versions) == 2
    subs = {s.bot_id: s for s in store.authors_bots(store.get_author("carol").id or 0).submissions}
    v2, v1 = store.get_bot("alpha"), store.get_bot("alpha@v1", include_removed=True)
    assert text(versions[0]) == (
        f"2 alpha {subs[v2.id].updated.strftime(WHEN)} knaves: PASS: second in play"
    )
    assert 'href="/bots/alpha"' not in versions[0]  # this page's own row is not a link
    assert text(versions[1]) == (
        f"1 alpha@v1 {subs[v1.id].updated.strftime(WHEN)} "
        f"knaves: PASS: first {escape(HOSTILE, quote=False)} retired"
    )
    assert '<a href="/bots/alpha%40v1">alpha@v1</a>' in versions[1]


def test_a_replaced_version_links_the_one_that_replaced_it(site: Site) -> None:
    html = page(site.app, "/bots/alpha%40v1")
    assert "<h1>alpha@v1 <small>(retired)</small></h1>" in html
    assert text(element(html, "p", "replaced")) == "replaced by version 2"
    assert '<a href="/bots/alpha">version 2</a>' in element(html, "p", "replaced")
    assert text(element(html, "p", "about")).startswith("by carol, version 1;")
    versions = rows(element(html, "table", "versions"))
    assert [text(r).split()[:2] for r in versions] == [["2", "alpha"], ["1", "alpha@v1"]]
    assert '<a href="/bots/alpha">alpha</a>' in versions[0]
    # The page of the version it links answers too.
    assert "<h1>alpha</h1>" in page(site.app, "/bots/alpha")


def test_a_house_bot_is_the_organizers_with_one_version(site: Site) -> None:
    house = site.store.get_bot("house1")
    html = page(site.app, "/bots/house1")
    assert text(element(html, "p", "about")).startswith("by organizer, version 1;")
    (only,) = rows(element(html, "table", "versions"))
    assert text(only) == f"1 house1 {house.created.strftime(WHEN)} – in play"


def test_the_leaderboard_shows_the_current_version_and_the_author(site: Site) -> None:
    html = page(site.app, f"/rankings/{GAME}")
    board = {
        re.search(r'data-bot="([^"]+)"', r).group(1): r  # type: ignore[union-attr]
        for r in re.findall(r"<tr data-bot[^>]*>.*?</tr>", html, re.S)
    }
    assert sorted(board) == ["alpha", "house1", "house2"]  # v1 is retired: not ranked
    alpha = board["alpha"]
    assert '<a href="/bots/alpha">alpha</a> <span class="version">v2</span>' in alpha
    assert "alpha v2 by carol" in text(alpha)
    assert "house1 by organizer" in text(board["house1"])
    assert 'class="version"' not in board["house1"]


def test_standings_name_the_version_that_played(site: Site) -> None:
    first = element(page(site.app, f"/tournaments/{site.first}"), "table", "standings")
    played = {
        re.search(r'data-bot="([^"]+)"', r).group(1): text(r)  # type: ignore[union-attr]
        for r in re.findall(r"<tr data-bot[^>]*>.*?</tr>", first, re.S)
    }
    assert sorted(played) == ["alpha@v1", "house1", "house2"]
    assert "alpha@v1 (retired) by carol" in played["alpha@v1"]  # its name says v1 already
    assert "by organizer" in played["house1"]
    second = element(page(site.app, f"/tournaments/{site.second}"), "table", "standings")
    assert "alpha v2 by carol" in text(second)


def test_author_text_is_escaped_and_rejected_details_are_on_no_page(site: Site) -> None:
    store = site.store
    paths = ["/", f"/rankings/{GAME}", f"/tournaments/{site.first}", f"/tournaments/{site.second}"]
    paths += [f"/bots/{urllib.parse.quote(b.name)}" for b in store.list_bots(include_removed=True)]
    for path in paths:
        html = page(site.app, path)
        assert HOSTILE not in html, path
        assert SECRET not in html, path
        assert "line two" not in html, path  # only an accepted verdict's first line
    assert escape(HOSTILE, quote=False) in page(site.app, "/bots/alpha%40v1")
    status, _ = get(site.app, "/bots/gamma")  # rejected before it was ever a bot
    assert status == 404
