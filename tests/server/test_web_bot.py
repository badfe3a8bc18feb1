"""A bot's page in Chromium: a rating chart per game with one point per stored history row,
faults by kind, recent matches, and a retired bot's page."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from server.web.app import RECENT
from tests.server.webkit import chromium_page, play_match, serve_web
from tournaments.store import Store


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Store]]:
    db = f"sqlite:///{tmp_path_factory.mktemp('bot') / 'cs.db'}"
    store = Store(db)
    names = [store.add_bot(f"bot{i}")[0].name for i in range(4)]
    for game, entrants in (("kill", names), ("knaves", names)):
        tournament = store.create_tournament(game, entrants, seats=3, rounds=2, seed=4)
        matches = store.matches(tournament.id or 0)
        for i, match in enumerate(matches):
            assert match.id is not None
            faults = []
            if game == "knaves" and i >= len(matches) - 3:  # among every bot's recent ones
                faults = [
                    {
                        "seat": 0,
                        "kind": kind,
                        "detail": "x",
                        "request_id": 1,
                        "decision": 1,
                        "fallback": "",
                    }
                    for kind in ("timeout", "illegal_action")
                ]
            play_match(store, match.id, faults=faults)
    # Bots with one rated set each: one point on their charts.
    fresh = [store.add_bot(f"fresh{i}")[0].name for i in range(3)]
    tournament = store.create_tournament("kill", fresh, seats=3, rounds=1, seed=5)
    for match in store.matches(tournament.id or 0):
        play_match(store, match.id or 0)
    with serve_web(db) as url:
        yield url, store
    store.close()


@pytest.fixture(scope="module")
def page() -> Iterator[Page]:
    with chromium_page() as p:
        yield p


def test_the_chart_has_one_point_per_history_row(site: tuple[str, Store], page: Page) -> None:
    url, store = site
    for name in ("bot0", "bot3"):
        page.goto(f"{url}/bots/{name}")
        for game in ("knaves", "kill"):
            history = store.rating_history(game, name)
            assert len(history) > 3
            chart = page.locator(f".chart[data-game='{game}']")
            expect(chart).to_have_attribute("data-points", str(len(history)))
            expect(chart.locator("canvas")).to_have_count(1)
            drawn = page.evaluate(f"ratingCharts[{game!r}].data")
            assert drawn[2] == pytest.approx([h.mu_after for h in history])
            assert drawn[3] == pytest.approx([h.mu_after - 3 * h.sigma_after for h in history])
            assert drawn[1] == pytest.approx([h.mu_after + 3 * h.sigma_after for h in history])


def test_the_chart_counts_sets_in_whole_numbers(site: tuple[str, Store], page: Page) -> None:
    url, store = site
    for name, game in (("fresh0", "kill"), ("bot0", "knaves")):
        sets = len(store.rating_history(game, name))
        assert sets == 1 if name == "fresh0" else sets > 3
        page.goto(f"{url}/bots/{name}")
        chart = page.locator(f".chart[data-game='{game}']")
        expect(chart).to_have_attribute("data-points", str(sets))
        ticks = (chart.get_attribute("data-x-ticks") or "").split()
        assert ticks and all(t.isdigit() and 1 <= int(t) <= sets for t in ticks), ticks
        if sets == 1:
            assert ticks == ["1"]
        played = next(r.matches for r in store.bot_profile(name).ratings if r.game == game)
        assert played > sets  # the axis counts sets, not the matches of the ratings table
        expect(page.locator(".chart-note").first).to_contain_text("One point after each rated set")


def test_faults_by_kind_and_recent_matches(site: tuple[str, Store], page: Page) -> None:
    url, store = site
    knaves = store.list_tournaments(game="knaves")[0]
    charged: dict[str, int] = {}
    for match in store.matches(knaves.id or 0)[-3:]:
        bot = store.get_bot(match.seats[0]).name
        charged[bot] = charged.get(bot, 0) + 1
    bot, times = max(charged.items(), key=lambda kv: kv[1])
    page.goto(f"{url}/bots/{bot}")
    rows = page.locator("#faults tr")
    expect(rows).to_have_count(3)
    expect(rows.nth(1)).to_have_text(f"illegal_action{times}")
    expect(rows.nth(2)).to_have_text(f"timeout{times}")
    bot_id = store.get_bot(bot).id
    played = sorted(
        (
            m.id or 0
            for t in store.list_tournaments()
            for m in store.matches(t.id or 0)
            if bot_id in m.seats
        ),
        reverse=True,
    )[:RECENT]
    faulted = {m.id for m in store.matches(knaves.id or 0)[-3:] if m.seats[0] == bot_id}
    assert faulted <= set(played)
    rows = page.locator("#recent tr[data-match]")
    expect(rows).to_have_count(len(played))
    assert [int(r) for r in rows.evaluate_all("rs => rs.map(r => r.dataset.match)")] == played
    expect(page.locator("#recent .fault")).to_have_count(len(faulted & set(played)))
    page.goto(f"{url}/bots/{bot}")
    for match_id in faulted & set(played):
        expect(page.locator(f"#recent tr[data-match='{match_id}'] .fault")).to_have_text("⚠2")


def test_a_retired_bot_page_answers_marked_retired(site: tuple[str, Store], page: Page) -> None:
    url, store = site
    assert store.remove_bot("bot2") == "retired"
    page.goto(f"{url}/bots/bot2")
    expect(page.locator("h1")).to_have_text("bot2 (retired)")
    history = store.rating_history("knaves", "bot2")
    expect(page.locator(".chart[data-game='knaves']")).to_have_attribute(
        "data-points", str(len(history))
    )
