"""The ladder's page in Chromium: its field ranked by μ − 3σ with provisional bots marked,
its latest sets with their totals, and both rewritten as sets are recorded."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import expect

from tests.server.webkit import chromium_page, serve_web
from tournaments.ratings import SeatOutcome
from tournaments.store import LADDER, Store

GAME = "knaves"


def play_set(store: Store, ladder_id: int, table: list[int], winner: int) -> None:
    for match in store.add_ladder_set(ladder_id, table):
        scores = [12 if b == winner else 3 for b in match.seats]
        store.record_result(match.id or 0, [SeatOutcome(s) for s in scores])


def test_the_ladder_page_ranks_marks_and_follows_its_sets(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'cs.db'}"
    with Store(db) as store:
        ids = {}
        for name in ("ann", "bob", "cy", "dee"):
            bot, _ = store.add_bot(name)
            ids[name] = bot.id or 0
        ladder = store.create_tournament(GAME, list(ids), format=LADDER, seed=2)
        assert ladder.id is not None
        for winner in ("ann", "ann", "bob"):
            play_set(store, ladder.id, [ids["ann"], ids["bob"], ids["cy"]], winner=ids[winner])
        play_set(store, ladder.id, [ids["bob"], ids["cy"], ids["dee"]], winner=ids["dee"])
        field = store.ladder_field(ladder.id)
        ranked = sorted(field, key=lambda e: -(e.mu - 3 * e.sigma))
        # ann's μ is above cy's but, less sure, its μ − 3σ below: a page that sorted by μ
        # (or by anything but μ − 3σ) would show another order
        assert [e.bot.name for e in ranked] == ["dee", "bob", "cy", "ann"]
        assert [e.bot.name for e in sorted(field, key=lambda e: -e.mu)] == [
            "dee",
            "bob",
            "ann",
            "cy",
        ]
        with serve_web(db) as url, chromium_page() as page:
            page.goto(f"{url}/rankings/{GAME}")
            page.locator("#ladder-link").click()
            expect(page.locator("h1")).to_have_text("Knaves ladder")
            rows = page.locator("table#ladder tbody tr")
            expect(rows).to_have_count(4)
            for i, entry in enumerate(ranked):
                expect(rows.nth(i)).to_have_attribute("data-bot", entry.bot.name)
                expect(rows.nth(i)).to_contain_text(f"{entry.mu - 3 * entry.sigma:.2f}")
                expect(rows.nth(i).locator("td").last).to_have_text(str(entry.sets))
            expect(page.locator("table#ladder .mark")).to_have_count(4)  # 4 sets: all provisional
            recent = page.locator("table#recent tbody tr")
            expect(recent).to_have_count(4)
            expect(recent.first).to_have_attribute("data-set", "4")
            expect(recent.first).to_contain_text("bob 18, cy 18, dee 72")
            play_set(store, ladder.id, [ids["dee"], ids["ann"], ids["bob"]], winner=ids["ann"])
            expect(page.locator("#sets")).to_have_text("5")
            expect(recent).to_have_count(5)
            expect(recent.first).to_contain_text("dee 18, ann 72, bob 18")
            page.goto(f"{url}/ladders/kill")
            expect(page.locator("#no-ladder")).to_contain_text("cardshark ladder run kill")
