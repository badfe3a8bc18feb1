"""Live pages in Chromium: a tournament started while its page and the leaderboard are open
moves them (finished count, status, standings, leaderboard rows) with no reload."""

from __future__ import annotations

import asyncio
import shlex
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from server.play.tournament import run_tournament
from tests.server.webkit import ROOT, chromium_page, serve_web
from tournaments.store import Store

EXAMPLES = ROOT / "clients" / "python" / "examples"


@pytest.fixture()
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Store, int]]:
    tmp = tmp_path_factory.mktemp("live")
    db = f"sqlite:///{tmp / 'cs.db'}"
    store = Store(db)
    names = []
    for name, script in [
        ("rules", "knaves_bot.py"),
        ("r1", "random_bot.py"),
        ("r2", "random_bot.py"),
    ]:
        bot, _ = store.add_bot(name, shlex.join([sys.executable, str(EXAMPLES / script)]))
        names.append(bot.name)
    tournament = store.create_tournament("knaves", names, rounds=2, seed=8)
    with serve_web(db) as url:
        yield url, store, tournament.id or 0
    store.close()


@pytest.fixture()
def page() -> Iterator[Page]:
    with chromium_page() as p:
        yield p


def test_a_running_tournament_moves_its_page_and_the_leaderboard(
    site: tuple[str, Store, int], page: Page, tmp_path: Path
) -> None:
    url, store, tid = site
    logs = tmp_path / "logs"
    scheduled = len(store.matches(tid))
    board = page.context.browser.new_page() if page.context.browser else page
    board.goto(f"{url}/rankings/knaves")
    expect(board.locator("#rankings")).to_contain_text("No rated matches yet.")
    page.goto(f"{url}/tournaments/{tid}")
    expect(page.locator("#finished")).to_have_text("0")
    expect(page.locator("#status")).to_have_text("pending")
    expect(page.locator("#standings tbody td:nth-child(4)")).to_have_text(["–", "–", "–"])
    # Remember the page: a reload would forget this.
    for p in (page, board):
        p.evaluate("window.keptAcrossUpdates = 42")
    seen: list[str] = []
    page.expose_function("sawFinished", lambda text: seen.append(text))
    page.evaluate("""() => new MutationObserver(() =>
        sawFinished(document.getElementById('finished').textContent)
    ).observe(document.getElementById('finished'), {childList: true, characterData: true,
                                                    subtree: true})""")
    runner = threading.Thread(target=lambda: asyncio.run(run_tournament(store, tid, log_dir=logs)))
    runner.start()
    try:
        expect(page.locator("#finished")).to_have_text(str(scheduled), timeout=60_000)
    finally:
        runner.join(timeout=120)
    expect(page.locator("#status")).to_have_text("finished")
    standings = store.rankings("knaves")
    means = page.locator("#standings tbody td:nth-child(4)").all_text_contents()
    assert "–" not in means and len(means) == 3
    expect(board.locator("#rankings tbody tr")).to_have_count(3)
    expect(board.locator("#rankings tbody tr").first).to_have_attribute(
        "data-bot", standings[0].bot
    )
    expect(board.locator("#rankings tbody tr").first).to_contain_text(f"{standings[0].mu:.2f}")
    # Rows the page wrote itself name each bot's author, as the server's do.
    expect(board.locator("#rankings tbody tr small.author")).to_have_text(["by organizer"] * 3)
    expect(page.locator("#standings tbody tr small.author")).to_have_text(["by organizer"] * 3)
    for p in (page, board):
        assert p.evaluate("window.keptAcrossUpdates") == 42
    assert seen and seen[-1] == str(scheduled)
