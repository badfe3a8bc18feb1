"""The web page in a real browser: leaderboard, bot page, match list and replay viewer."""

from __future__ import annotations

import asyncio
import shlex
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session

from server.play.tournament import run_tournament
from tests.server.webkit import ROOT, chromium_page, serve_web
from tournaments.models import Match
from tournaments.store import Store

EXAMPLES = ROOT / "clients" / "python" / "examples"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Store]]:
    tmp = tmp_path_factory.mktemp("web")
    db = f"sqlite:///{tmp / 'cs.db'}"
    store = Store(db)
    names = []
    for name, script in [
        ("rules", "knaves_bot.py"),
        ("rand1", "random_bot.py"),
        ("rand2", "random_bot.py"),
    ]:
        bot, _ = store.add_bot(name, shlex.join([sys.executable, str(EXAMPLES / script)]))
        names.append(bot.name)
    tournament = store.create_tournament("knaves", names, rounds=1, seed=5)
    asyncio.run(run_tournament(store, tournament.id or 0, log_dir=tmp / "logs"))
    add_no_show(store, store.matches(tournament.id or 0)[0].id or 0)
    with serve_web(db) as url:
        yield url, store
    store.close()


def add_no_show(store: Store, match_id: int) -> None:
    """Rewrite a stored record with a no-show of seat 2, charged before the first decision
    (which seat 0 or 1 makes), as the referee records one."""
    with Session(store.engine) as session:
        row = session.get(Match, match_id)
        assert row is not None
        row.record = dict(row.record or {})
        row.record["faults"] = [
            {
                "seat": 2,
                "kind": "no_show",
                "detail": "did not connect within 10 s",
                "request_id": 0,
                "decision": 0,
                "fallback": "",
            }
        ]
        session.add(row)
        session.commit()


@pytest.fixture(scope="module")
def browser_page() -> Iterator[Page]:
    with chromium_page() as page:
        yield page


def test_leaderboard_and_bot_pages(site: tuple[str, Store], browser_page: Page) -> None:
    url, store = site
    page = browser_page
    page.goto(url)
    page.get_by_role("link", name="Knaves").first.click()
    expect(page.locator("h1")).to_have_text("Knaves")
    rows = page.locator("table#rankings tr")
    expect(rows).to_have_count(1 + 3)
    best = store.rankings("knaves")[0]
    expect(rows.nth(1)).to_contain_text(best.bot)
    expect(rows.nth(1)).to_contain_text(f"{best.mu:.2f}")
    expect(page.locator("#legend")).to_contain_text("ranked by μ − 3σ")
    rows.nth(1).get_by_role("link").click()
    expect(page.locator("h1")).to_have_text(best.bot)
    tournament = store.list_tournaments()[0]
    played = len(store.matches(tournament.id or 0, include_voided=False))
    expect(page.locator("a[href^='/matches/']")).to_have_count(played)


def test_replay_viewer_steps_through_a_match(site: tuple[str, Store], browser_page: Page) -> None:
    url, store = site
    page = browser_page
    tournament = store.list_tournaments()[0]
    played = len(store.matches(tournament.id or 0))
    page.goto(url)
    home = page.locator(f"tr:has(a[href='/tournaments/{tournament.id}'])")
    expect(home).to_contain_text(f"{played}/{played}")
    page.goto(f"{url}/tournaments/{tournament.id}")
    expect(page.locator("table#matches tr")).to_have_count(1 + played)
    page.locator("table#matches a[href^='/matches/']").first.click()
    match_id = int(page.url.rsplit("/", 1)[1])
    actions = (store.get_match(match_id).record or {})["actions"]
    expect(page.locator("#total")).to_have_text(str(len(actions)))
    for _ in range(3):
        page.get_by_role("button", name="next ▶").click()
    expect(page.locator("#step")).to_have_text("3")
    expect(page.locator("#action .words")).to_have_attribute("data-action", actions[2])
    expect(page.locator("#s3")).to_have_class("current")
    page.keyboard.press("ArrowLeft")
    expect(page.locator("#step")).to_have_text("2")
    expect(page.locator("#action .words")).to_have_attribute("data-action", actions[1])
    page.get_by_role("button", name="last ▶|").click()
    expect(page.locator("#step")).to_have_text(str(len(actions)))


def test_unknown_pages_are_404(site: tuple[str, Store]) -> None:
    url, _ = site
    for path in ("/rankings/chess", "/bots/nobody", "/matches/99999", "/tournaments/77"):
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(url + path, timeout=5)
        assert err.value.code == 404


def test_json_endpoints_are_read_only(site: tuple[str, Store]) -> None:
    url, store = site
    tournament = store.list_tournaments()[0]
    match = store.matches(tournament.id or 0)[0]
    paths = [f"/api/matches/{match.id}/replay", f"/api/tournaments/{tournament.id}"]
    for path in paths:
        with urllib.request.urlopen(url + path, timeout=5) as response:
            assert response.status == 200
        for method in ("POST", "PUT", "DELETE", "PATCH"):
            request = urllib.request.Request(url + path, data=b"{}", method=method)
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(request, timeout=5)
            assert err.value.code == 405, (method, path)


def test_no_page_shows_a_bot_command_or_path(site: tuple[str, Store]) -> None:
    url, store = site
    tournament = store.list_tournaments()[0]
    paths = ["/", "/rankings/knaves", f"/tournaments/{tournament.id}"]
    paths += [f"/bots/{b.name}" for b in store.list_bots()]
    paths += [f"/matches/{m.id}" for m in store.matches(tournament.id or 0)]
    paths += [f"/api/matches/{m.id}/replay" for m in store.matches(tournament.id or 0)]
    paths += [f"/api/tournaments/{tournament.id}"]
    secrets = [str(ROOT), sys.executable, "random_bot.py", "knaves_bot.py", "examples"]
    for path in paths:
        with urllib.request.urlopen(url + path, timeout=5) as response:
            html = response.read().decode()
        assert [s for s in secrets if s in html] == [], path


def test_a_fault_names_its_own_seat_and_a_retired_bot_keeps_its_page(
    site: tuple[str, Store], browser_page: Page
) -> None:
    """Runs last: it retires a bot."""
    url, store = site
    tournament = store.list_tournaments()[0]
    match = store.matches(tournament.id or 0)[0]  # its record has a no-show of seat 2
    names = [store.get_bot(b).name for b in match.seats]
    page = browser_page
    page.goto(f"{url}/matches/{match.id}#step=1")
    fault = page.locator("#faults .fault")
    expect(fault).to_have_count(1)
    expect(fault).to_contain_text(f"fault no_show of seat 2 {names[2]}")
    expect(page.locator("#seats .seat.faulted")).to_have_attribute("data-seat", "2")
    expect(page.locator("#result tr[data-seat='2'] td").nth(4)).to_have_text("1")
    retired = names[1]
    assert store.remove_bot(retired) == "retired"
    page.goto(f"{url}/bots/{retired}")
    expect(page.locator("h1")).to_have_text(f"{retired} (retired)")
    played = len(store.matches(tournament.id or 0, include_voided=False))
    expect(page.locator("a[href^='/matches/']")).to_have_count(played)
