"""The tournament page in Chromium: standings and cross-table computed from the stored matches,
progress, the match list's filters, faults and forfeits on the bot that made them."""

from __future__ import annotations

import math
import urllib.error
import urllib.request
from collections import defaultdict
from collections.abc import Iterator
from statistics import fmean, stdev

import pytest
from playwright.sync_api import Page, expect

from tests.server.webkit import chromium_page, play_match, serve_web
from tournaments.models import MatchStatus
from tournaments.sequential import t_quantile_975
from tournaments.store import Store

PLAYED = 40  # of 48 scheduled: the page shows a tournament in progress


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Store, int]]:
    db = f"sqlite:///{tmp_path_factory.mktemp('tournament') / 'cs.db'}"
    store = Store(db)
    names = [store.add_bot(f"bot{i}")[0].name for i in range(4)]
    tournament = store.create_tournament("knaves", names, rounds=2, seed=21)
    assert tournament.id is not None
    for i, match in enumerate(store.matches(tournament.id)[:PLAYED]):
        assert match.id is not None
        faults = []
        if i % 7 == 3:  # a timeout charged to the bot in seat 1
            faults = [
                {
                    "seat": 1,
                    "kind": "timeout",
                    "detail": "no reply in 1000 ms",
                    "request_id": 5,
                    "decision": 2,
                    "fallback": "",
                }
            ]
        play_match(store, match.id, faults=faults, forfeit=2 if i == 5 else None)
    with serve_web(db) as url:
        yield url, store, tournament.id
    store.close()


@pytest.fixture(scope="module")
def page() -> Iterator[Page]:
    with chromium_page() as p:
        yield p


def signed(value: float) -> str:
    return f"{value:+.2f}".replace("-", "−")


def expected_cross(store: Store, tid: int) -> dict[tuple[str, str], str]:
    """Each pair's cell, from the stored matches: row score minus column score, mean per deal
    (a table in a round: its rotations share the deal) with a 95 % t-interval over deals."""
    names = {b.id: b.name for b in store.tournament_entrants(tid)}
    deals: dict[tuple[str, str], dict[tuple[int, int], list[float]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for match in store.matches(tid):
        if match.status != MatchStatus.FINISHED.value:
            continue
        scores = (match.result or {})["scores"]
        for i, a in enumerate(match.seats):
            for j, b in enumerate(match.seats):
                if i != j:
                    deal = (match.round, match.table_index)
                    deals[(names[a], names[b])][deal].append(scores[i] - scores[j])
    cells = {}
    for pair, by_deal in deals.items():
        means = [fmean(d) for d in by_deal.values()]
        mean = fmean(means)
        half = t_quantile_975(len(means) - 1) * stdev(means) / math.sqrt(len(means))
        cells[pair] = f"{signed(mean)} [{signed(mean - half)}, {signed(mean + half)}]"
    return cells


def test_standings_and_cross_table_are_computed_from_the_stored_matches(
    site: tuple[str, Store, int], page: Page
) -> None:
    url, store, tid = site
    page.goto(f"{url}/tournaments/{tid}")
    expect(page.locator("#finished")).to_have_text(str(PLAYED))
    expect(page.locator("#scheduled")).to_have_text("48")
    totals: dict[str, list[float]] = defaultdict(list)
    names = {b.id: b.name for b in store.tournament_entrants(tid)}
    for match in store.matches(tid):
        if match.status == MatchStatus.FINISHED.value:
            for bot, score in zip(match.seats, (match.result or {})["scores"], strict=True):
                totals[names[bot]].append(score)
    order = sorted(totals, key=lambda b: (-fmean(totals[b]), b))
    rows = page.locator("#standings tbody tr")
    expect(rows).to_have_count(4)
    for i, bot in enumerate(order):
        expect(rows.nth(i)).to_have_attribute("data-bot", bot)
        expect(rows.nth(i).locator("td").nth(3)).to_have_text(f"{fmean(totals[bot]):.2f}")
    cells = expected_cross(store, tid)
    assert len(cells) == 12
    header = page.locator("#cross thead th").all_text_contents()[1:]
    assert header == order
    for a in order:
        shown = page.locator(f"#cross tr[data-bot='{a}'] td").all_inner_texts()
        want = [" ".join(cells[(a, b)].split()) if a != b else "·" for b in order]
        assert [" ".join(s.split()) for s in shown] == want, a


def test_faults_and_forfeits_are_marked_on_the_bot_that_made_them(
    site: tuple[str, Store, int], page: Page
) -> None:
    url, store, tid = site
    matches = store.matches(tid)
    faulted = store.get_bot(matches[3].seats[1]).name
    page.goto(f"{url}/tournaments/{tid}")
    page.locator("#filters select[name=bot]").select_option(faulted)
    page.locator("#filters input[name=faults]").check()
    page.get_by_role("button", name="filter").click()
    rows = page.locator("#matches tr[data-match]")
    want = [
        m
        for i, m in enumerate(matches[:PLAYED])
        if i % 7 == 3 and store.get_bot(m.seats[1]).name == faulted
    ]
    expect(rows).to_have_count(len(want))
    for row in rows.all():
        expect(row.locator(f".seat[data-bot='{faulted}'] .fault")).to_have_text("⚠1")
        expect(row.locator(".seat .fault")).to_have_count(1)
        expect(row.locator(".seat[data-seat='1'] .fault")).to_have_count(1)
    page.goto(f"{url}/tournaments/{tid}?forfeits=1")
    expect(rows).to_have_count(1)
    expect(rows.first).to_have_attribute("data-match", str(matches[5].id))
    loser = store.get_bot(matches[5].seats[2]).name
    expect(rows.first.locator(".forfeit")).to_have_count(1)
    expect(rows.first.locator(f".seat[data-seat='2'][data-bot='{loser}'] .forfeit")).to_be_visible()
    page.goto(f"{url}/tournaments/{tid}?status=pending")
    expect(rows).to_have_count(48 - PLAYED)
    page.goto(f"{url}/tournaments/{tid}")
    standing = page.locator(f"#standings tr[data-bot='{loser}'] td").nth(7)
    expect(standing).to_have_text("1")


def test_a_deal_still_in_play_keeps_its_replay_closed(
    site: tuple[str, Store, int], page: Page
) -> None:
    url, store, tid = site
    matches = store.matches(tid)
    played, pending = matches[PLAYED - 1], matches[PLAYED]
    assert (played.round, played.table_index) == (pending.round, pending.table_index)
    for match in (played, pending):
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"{url}/api/matches/{match.id}/replay?seat=0", timeout=5)
        assert err.value.code == 409
        page.goto(f"{url}/matches/{match.id}")
        expect(page.locator("#in-play")).to_contain_text("every rotation of this deal")
        expect(page.locator("#replay")).to_have_count(0)
    done = matches[0]
    with urllib.request.urlopen(f"{url}/api/matches/{done.id}/replay", timeout=5) as response:
        assert response.status == 200


def test_the_home_page_lists_each_tournament_with_its_format_and_entrants(
    tmp_path_factory: pytest.TempPathFactory, page: Page
) -> None:
    db = f"sqlite:///{tmp_path_factory.mktemp('home') / 'cs.db'}"
    store = Store(db)
    names = [store.add_bot(f"entrant{i}")[0].name for i in range(7)]
    store.create_tournament("knaves", names[:3], rounds=1, seed=1)
    store.create_tournament("kill", names, rounds=1, seed=2, format="gauntlet")
    store.create_tournament("ninja-whist", names[2:], rounds=0, seed=3, format="ladder")
    tournaments = store.list_tournaments()
    assert {t.format for t in tournaments} == {"round_robin", "gauntlet", "ladder"}
    try:
        with serve_web(db) as url:
            page.goto(url)
            for t in tournaments:
                entrants = [b.name for b in store.tournament_entrants(t.id or 0)]
                row = page.locator(f"tr[data-tournament='{t.id}']")
                expect(row.locator(".format")).to_have_attribute("data-format", t.format)
                expect(row.locator(".format")).to_have_text(t.format.replace("_", " "))
                expect(row.locator(".seats")).to_have_text(str(t.seats))
                expect(row.locator(".entrants")).to_have_text(str(len(entrants)))
                shown = row.locator(".field .entrant")
                expect(shown).to_have_text(entrants[:4])  # the first few, in entry order
                more = row.locator(".field .more")
                if len(entrants) > 4:
                    expect(more).to_have_text(f" and {len(entrants) - 4} more")
                else:
                    expect(more).to_have_count(0)
    finally:
        store.close()
