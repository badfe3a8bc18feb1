"""The replay viewer in Chromium: every game's table at a step is what its engine computes."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session

from games.kansas_city import SUIT_NAMES as KC_COLOURS
from games.registry import all_games, get_game
from server.views.transcript import seat_names
from tests.games.contract import leaves
from tests.server.webkit import chromium_page, play_match, serve_web
from tournaments.models import Bot, BotArchive, Submission, SubmissionState
from tournaments.store import Store

XSS = "<img src=x onerror=alert(1)>"
FAULT_DETAIL = "unknown action '<script>alert(2)</script>'"
VERDICT = "knaves: PASS: <script>alert(3)</script>"  # an accepted verdict's first line
SEAT = 1  # the seat whose one-seat view is checked
FORFEIT = 3  # the seat forfeited in the Kill match


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Store, dict[str, int]]]:
    """A database with one stored match of every game (a fault in the Knaves one, a bot with
    a hostile name at its table) and `cardshark serve` over it."""
    db = f"sqlite:///{tmp_path_factory.mktemp('replay') / 'cs.db'}"
    store = Store(db)
    names = [store.add_bot(f"p{i}")[0].name for i in range(5)]
    with Session(store.engine) as session:  # a name add_bot would refuse: it must still be safe
        session.add(Bot(name=XSS, token_hash="0" * 64))
        session.commit()
    xss_id = store.get_bot(XSS).id
    assert xss_id is not None
    author, _ = store.add_author("mallory")
    with Session(store.engine) as session:  # the hostile bot came from a submission
        session.add(BotArchive(digest="1" * 64, data=b"x", size=1))
        session.flush()
        session.add(
            Submission(
                author_id=author.id or 0,
                name=XSS,
                command="x",
                digest="1" * 64,
                state=SubmissionState.ACCEPTED.value,
                detail=f"{VERDICT}\n{XSS}",
                bot_id=xss_id,
            )
        )
        session.commit()
    matches = {}
    for name, game in all_games().items():
        n = game.spec.default_seats
        entrants: list[int | str] = [xss_id, *names[1:n]] if name == "knaves" else [*names[:n]]
        tournament = store.create_tournament(name, entrants, rounds=1, seed=11)
        scheduled = store.matches(tournament.id or 0)
        first = scheduled[0]
        assert first.id is not None
        faults = []
        if name == "knaves":
            faults = [
                {
                    "seat": 2,
                    "kind": "unknown_action",
                    "detail": FAULT_DETAIL,
                    "request_id": 9,
                    "decision": 4,
                    "fallback": "play:2C",
                }
            ]
        play_match(store, first.id, faults=faults, forfeit=FORFEIT if name == "kill" else None)
        for rotation in scheduled[1:]:  # the replay opens once every rotation of the deal is played
            if (rotation.round, rotation.table_index) == (first.round, first.table_index):
                play_match(store, rotation.id or 0)
        matches[name] = first.id
    with serve_web(db) as url:
        yield url, store, matches
    store.close()


@pytest.fixture(scope="module")
def page() -> Iterator[Page]:
    with chromium_page() as p:
        yield p


def replay_of(store: Store, match_id: int) -> tuple[Any, Any, list[str]]:
    """The game, stored match and its actions."""
    detail = store.match_detail(match_id)
    return get_game(detail.tournament.game), detail, (detail.match.record or {})["actions"]


def state_at(store: Store, match_id: int, n: int) -> Any:
    game, detail, actions = replay_of(store, match_id)
    m, t = detail.match, detail.tournament
    return game.replay(m.seed, len(m.seats), t.options, actions[:n])


def sealed_at(store: Store, match_id: int, n: int) -> set[str]:
    """The cards the full table masks at step n: those sealed at any time in its hand."""
    game, _, actions = replay_of(store, match_id)
    state = state_at(store, match_id, n)
    hand = game.hands_finished(state)
    sealed = game.sealed_cards(state)
    for action in actions[n:]:
        game.apply(state, action)
        if game.hands_finished(state) != hand:
            break
        sealed |= game.sealed_cards(state)
    return sealed


def first_hand_end(store: Store, match_id: int) -> int:
    """The step right after the action that finished the first hand."""
    game, detail, actions = replay_of(store, match_id)
    m, t = detail.match, detail.tournament
    state = game.new_match(m.seed, len(m.seats), t.options)
    for n, action in enumerate(actions, 1):
        game.apply(state, action)
        if game.hands_finished(state):
            return n
    raise AssertionError("no hand ended")


def trick_of(game: str, view: dict[str, Any]) -> list[str] | None:
    """The cards of the trick in play, as each game's view lists them (Kill has none)."""
    if game == "kill":
        return None
    trick = view["trick"]
    return [p["card"] for p in trick] if game in ("kansas-city", "ninja-whist") else list(trick)


def codes(page: Page, selector: str) -> list[str]:
    return [
        str(c)
        for c in page.locator(selector).evaluate_all("nodes => nodes.map(n => n.dataset.card)")
    ]


# The suit glyph of each game's suit as its view names it (a letter or a word).
GLYPHS = {
    **{"S": "♠", "H": "♥", "D": "♦", "C": "♣"},
    **{"spades": "♠", "hearts": "♥", "diamonds": "♦", "clubs": "♣"},
    **{"sword": "⚔", "staff": "⚚", "knives": "†", "stars": "★"},
}
NINJA_LETTERS = {"sword": "S", "staff": "T", "knives": "N", "stars": "R"}
KNIVES_LETTERS = {"spades": "S", "clubs": "C", "diamonds": "D", "hearts": "H"}


def suit_of(game: str, view: dict[str, Any], code: str) -> str:
    """The group a hand's card is drawn in: its suit, the Jokers with the trumps."""
    if game == "knives" and code == "JO":
        return "K"
    if game == "ninja-whist" and code == "J*":
        return NINJA_LETTERS.get(view["trump"], code)
    return code if code == "JK" else code[1:]


def trump_groups(game: str, view: dict[str, Any]) -> list[str]:
    """The suits a hand shows first: the trumps."""
    if game == "knaves":
        return [view["trump"]]
    if game == "knives":
        return ["K", KNIVES_LETTERS.get(view["strong_suit"], "K")]
    if game == "ninja-whist":
        return [NINJA_LETTERS.get(view["trump"], "")]
    return ["JK"] if game == "kill" else []


def by_suit(game: str, view: dict[str, Any], hand: list[str]) -> list[str]:
    """The engine's hand grouped by suit, each group where its first card is, trumps first."""
    groups: dict[str, list[str]] = {}
    for code in hand:
        groups.setdefault(suit_of(game, view, code), []).append(code)
    first = [t for t in trump_groups(game, view) if t in groups]
    order = first + [k for k in groups if k not in first]
    return [code for k in order for code in groups[k]]


def trick_plays(game: str, view: dict[str, Any], seats: int) -> list[tuple[int, str]]:
    """The trick in play as (seat, card) pairs, from the engine's view."""
    trick = view["trick"]
    if game in ("kansas-city", "ninja-whist"):
        return [(p["seat"], p["card"]) for p in trick]
    return [((view["leader"] + i) % seats, c) for i, c in enumerate(trick)]


def closed_plays(game: str, trick: dict[str, Any], seats: int) -> list[tuple[int, str]]:
    """A closed trick (a view's or a hand record's) as (seat, card) pairs."""
    if "plays" in trick:
        return [(p["seat"], p["card"]) for p in trick["plays"]]
    return [((trick["leader"] + i) % seats, c) for i, c in enumerate(trick["cards"])]


def shown_plays(page: Page, selector: str) -> list[tuple[int, str, str]]:
    """The plays drawn in the middle of the table: seat, card, the name written beside it."""
    return [
        (int(p[0]), str(p[1]), str(p[2]))
        for p in page.locator(f"{selector} .play").evaluate_all(
            """nodes => nodes.map(n => [n.dataset.seat, n.querySelector('[data-card]').dataset.card,
                                        n.querySelector('.who').textContent])"""
        )
    ]


def seat_towards(page: Page, play: str) -> int:
    """The seat a play drawn in the middle of the table points to: the seat whose panel's
    direction from the table's centre is nearest to the play's direction from the trick's."""
    return int(
        page.locator(play).evaluate(
            """node => {
              const centre = (e) => { const r = e.getBoundingClientRect();
                                      return [r.x + r.width / 2, r.y + r.height / 2]; };
              const unit = ([x, y], [ox, oy]) => { const d = Math.hypot(x - ox, y - oy);
                                                   return [(x - ox) / d, (y - oy) / d]; };
              const [px, py] = unit(centre(node), centre(node.parentElement));
              const table = centre(document.getElementById('seats'));
              let best = null, bestCos = -2;
              for (const seat of document.querySelectorAll('#seats .seat')) {
                const [sx, sy] = unit(centre(seat), table);
                const cos = px * sx + py * sy;
                if (cos > bestCos) { bestCos = cos; best = seat.dataset.seat; }
              }
              return best;
            }"""
        )
    )


def open_replay(page: Page, url: str, match_id: int, seat: str = "") -> None:
    page.goto(f"{url}/matches/{match_id}")
    expect(page.locator("#replay")).to_have_attribute("data-loaded", "full")
    if seat:
        page.locator("#view").select_option(seat)
        expect(page.locator("#replay")).to_have_attribute("data-loaded", f"seat-{seat}")


def go_to(page: Page, n: int, last: int) -> None:
    """Step with the controls a user has: Home, End, or the step's link."""
    if n == 0:
        page.keyboard.press("Home")
    elif n == last:
        page.keyboard.press("End")
    else:
        page.locator(f"#moves a[href^='#step={n}']").first.click()
    expect(page.locator("#step")).to_have_text(str(n))


@pytest.mark.parametrize("name", sorted(all_games()))
def test_the_table_at_a_step_is_what_the_engine_computes(
    site: tuple[str, Store, dict[str, int]], page: Page, name: str
) -> None:
    url, store, matches = site
    match_id = matches[name]
    game, detail, actions = replay_of(store, match_id)
    open_replay(page, url, match_id)
    expect(page.locator("#total")).to_have_text(str(len(actions)))
    ended = first_hand_end(store, match_id)
    for n in (0, ended, len(actions)):
        go_to(page, n, len(actions))
        state = state_at(store, match_id, n)
        scores = page.locator("#seats .seat .score")
        expect(scores).to_have_text([str(s) for s in game.scores(state)])
        sealed = sealed_at(store, match_id, n)  # Kansas City's upgraded faces, masked
        for seat in range(len(detail.match.seats)):
            view = game.sealed_view(state, seat, sealed)
            row = f"#seats .seat[data-seat='{seat}']"
            drawn = codes(page, f"{row} .hand-cards [data-card]")
            assert drawn == by_suit(name, view, list(view["hand"])), (n, seat)
            tops = page.locator(f"{row} .hand-cards .card").evaluate_all(
                "nodes => nodes.map(n => Math.round(n.getBoundingClientRect().top))"
            )
            assert len(set(tops)) <= 1, (n, seat, tops)  # one row, however many cards
        trick = trick_of(name, game.view(state, 0))
        if trick is None:
            expect(page.locator("#trick")).to_have_count(0)
        else:
            assert codes(page, "#trick [data-card]") == trick, n
        to_act = game.to_act(state)
        expect(page.locator("#seats .seat.to-act")).to_have_count(0 if to_act is None else 1)
        public = game.view(state, 0)
        trump = {"knaves": "trump", "knives": "strong_suit", "ninja-whist": "trump"}.get(name)
        if trump is None or (name == "knives" and not public[trump]):  # none, or not yet named
            expect(page.locator("#trump")).to_have_count(0)
        elif not public[trump]:  # a Ninja Whist round without trumps
            expect(page.locator("#trump")).to_have_text("trump none")
        else:
            expect(page.locator("#trump")).to_have_attribute("data-suit", public[trump])
            expect(page.locator("#trump .glyph")).to_have_text(GLYPHS[public[trump]])
        if n:
            shown = game.sealed_action(actions[n - 1], sealed_at(store, match_id, n - 1))
            expect(page.locator("#action .words")).to_have_attribute("data-action", shown)
            actor = game.to_act(state_at(store, match_id, n - 1))
            expect(page.locator("#action .actor")).to_have_text(seat_names(detail)[actor])
    go_to(page, ended, len(actions))
    record = game.hand_records(state_at(store, match_id, ended))[0]
    expect(page.locator("#last-hand")).to_contain_text("hand 1 ended")
    expect(page.locator("#last-hand")).to_contain_text(
        "points " + " ".join(str(p) for p in record["points"])
    )


def trick_steps(store: Store, match_id: int) -> tuple[int, int, int]:
    """Steps of the match: the first with two or more cards of a trick in play, the first
    right after a trick closed with its hand still on, and the first hand's end."""
    game, detail, actions = replay_of(store, match_id)
    m, t = detail.match, detail.tournament
    state = game.new_match(m.seed, len(m.seats), t.options)
    in_play = closed = ended = 0
    for n, action in enumerate(actions, 1):
        before, hands = len(game.view(state, 0)["tricks"]), game.hands_finished(state)
        game.apply(state, action)
        if game.hands_finished(state) > hands:
            ended = ended or n
            continue
        view = game.view(state, 0)
        if not in_play and len(view["trick"]) >= 2:
            in_play = n
        if not closed and len(view["tricks"]) > before:
            closed = n
        if in_play and closed and ended:
            break
    return in_play, closed, ended


@pytest.mark.parametrize("name", sorted(set(all_games()) - {"kill"}))
@pytest.mark.parametrize("seat", ["", str(SEAT)])
def test_the_trick_sits_by_its_players_and_its_winner_is_marked(
    site: tuple[str, Store, dict[str, int]], page: Page, name: str, seat: str
) -> None:
    url, store, matches = site
    match_id = matches[name]
    game, detail, actions = replay_of(store, match_id)
    names, seats = seat_names(detail), len(detail.match.seats)
    open_replay(page, url, match_id, seat)
    in_play, closed, ended = trick_steps(store, match_id)
    assert in_play and closed and ended

    go_to(page, in_play, len(actions))
    view = game.view(state_at(store, match_id, in_play), 0)
    expected = trick_plays(name, view, seats)
    assert shown_plays(page, "#trick") == [(s, c, names[s]) for s, c in expected]
    for s, _ in expected:  # each card is on its player's side of the table
        assert seat_towards(page, f"#trick .play[data-seat='{s}']") == s, (s, expected)
    expect(page.locator("#last-trick")).to_have_count(0)
    expect(page.locator(".play.winner")).to_have_count(0)

    for n, trick in (
        (closed, game.view(state_at(store, match_id, closed), 0)["tricks"][-1]),
        (ended, game.hand_records(state_at(store, match_id, ended))[0]["tricks"][-1]),
    ):
        go_to(page, n, len(actions))
        expect(page.locator("#trick .play")).to_have_count(0)
        plays = closed_plays(name, trick, seats)
        assert shown_plays(page, "#last-trick") == [(s, c, names[s]) for s, c in plays], n
        winner = page.locator("#last-trick .play.winner")
        expect(winner).to_have_count(1)
        expect(winner).to_have_attribute("data-seat", str(trick["winner"]))
        expect(winner.locator(".won")).to_have_text("✔ won")


def test_kansas_city_colours_have_letters_and_a_legend(
    site: tuple[str, Store, dict[str, int]], page: Page
) -> None:
    url, store, matches = site
    open_replay(page, url, matches["kansas-city"])
    hand = page.locator("#seats .seat[data-seat='0'] .hand-cards [data-card]")
    cards = codes(page, "#seats .seat[data-seat='0'] .hand-cards [data-card]")
    assert any(c[1:] in KC_COLOURS for c in cards), cards
    letters = hand.evaluate_all(
        "ns => ns.map(n => (n.querySelector('.suit-letter') || {textContent: '?'}).textContent)"
    )
    assert letters == [c[1:] for c in cards]  # the colour's letter ("5?": a face never shown)
    expect(page.locator("#legend .key")).to_have_text(
        [f"●{letter} {colour}" for letter, colour in KC_COLOURS.items()]
    )


class SeatKnowledge:
    """Per step of a match, the cards hidden from a seat, and at the steps right after a hand
    ended the cards of that hand's published record."""

    def __init__(self, game: Any, detail: Any, actions: list[str], seat: int) -> None:
        m, t = detail.match, detail.tournament
        state = game.new_match(m.seed, len(m.seats), t.options)
        self.hidden = [game.hidden_cards(state, seat)]
        self.ended: dict[int, set[str]] = {}
        for n, action in enumerate(actions, 1):
            before = game.hands_finished(state)
            game.apply(state, action)
            self.hidden.append(game.hidden_cards(state, seat))
            if game.hands_finished(state) > before:
                self.ended[n] = set(leaves(game.hand_records(state)[-1]))


@pytest.mark.parametrize("name", sorted(all_games()))
def test_one_seat_view_has_only_what_that_seat_was_sent(
    site: tuple[str, Store, dict[str, int]], page: Page, name: str
) -> None:
    url, store, matches = site
    match_id = matches[name]
    game, detail, actions = replay_of(store, match_id)
    open_replay(page, url, match_id, str(SEAT))
    ended = first_hand_end(store, match_id)
    known_at = SeatKnowledge(game, detail, actions, SEAT)
    for n in (1, ended - 1, ended, len(actions) // 2, len(actions)):
        go_to(page, n, len(actions))
        state = state_at(store, match_id, n)
        hidden = game.hidden_cards(state, SEAT)
        # The finished hand's record, published to every seat, is drawn in the hand's summary
        # and (its last trick) in the middle of the table: its cards are the only ones that
        # may be of the new deal.
        record = "#last-hand [data-card], .from-record [data-card]"
        shown = codes(page, f"#replay [data-card]:not({record}, #moves [data-card])")
        assert shown or codes(page, record), n  # the page drew cards
        assert not hidden & set(shown), (n, sorted(hidden & set(shown)))
        published = (
            set(leaves(game.hand_records(state)[-1])) if game.hands_finished(state) else set()
        )
        assert set(codes(page, record)) <= published, n
        # Each move in the step list names only cards its seat could know at that step (a move
        # that ended a hand: cards of the hand's published record); later moves name none.
        listed_at = {
            int(k[1:]): set(cards)
            for k, cards in page.locator("#moves li").evaluate_all(
                "lis => lis.map(li => [li.id, [...li.querySelectorAll('[data-card]')]"
                ".map(c => c.dataset.card)])"
            )
        }
        assert sorted(listed_at) == list(range(1, len(actions) + 1))
        for k, listed in listed_at.items():
            if k > n:
                assert not listed, (n, k)
            elif k in known_at.ended:
                assert listed <= known_at.ended[k], (n, k)
            else:
                assert not listed & known_at.hidden[k], (n, k, sorted(listed & known_at.hidden[k]))
        own = f"#seats .seat[data-seat='{SEAT}'] .hand-cards [data-card]"
        view = game.view(state, SEAT)
        assert codes(page, own) == by_suit(name, view, list(view["hand"])), n
        expect(page.locator(".hand-cards")).to_have_count(1)
        # Moves after this step are links without their actions.
        later = page.locator(f"#moves li#s{n + 1}")
        if n < len(actions):
            expect(later).to_have_text(str(n + 1))


@pytest.mark.parametrize("name", sorted(all_games()))
def test_the_seat_json_names_no_card_hidden_from_that_seat(
    site: tuple[str, Store, dict[str, int]], name: str
) -> None:
    url, store, matches = site
    match_id = matches[name]
    game, detail, actions = replay_of(store, match_id)
    with urllib.request.urlopen(f"{url}/api/matches/{match_id}/replay?seat={SEAT}") as r:
        data = json.load(r)
    assert len(data["steps"]) == len(actions) + 1
    m, t = detail.match, detail.tournament
    state = game.new_match(m.seed, len(m.seats), t.options)
    for n, step in enumerate(data["steps"]):
        if n:
            game.apply(state, actions[n - 1])
        hidden = game.hidden_cards(state, SEAT)
        assert step["scores"] == game.scores(state)
        assert step["shared"] == json.loads(json.dumps(game.view(state, SEAT)))
        seen = {k: v for k, v in step.items() if k != "hand_ended"}
        if step["hand_ended"]:
            seen.pop("move")  # it named a card of the hand now published
        words = {w for leaf in leaves(seen) for w in leaf.replace(">", ":").split(":")}
        assert not hidden & words, (n, sorted(hidden & words))


def moves_at(store: Store, match_id: int) -> list[tuple[int, int, int, int, str]]:
    """Each move as the step list groups it: step, hand (from 1), tricks closed before it in
    its hand, seat, action id."""
    game, detail, actions = replay_of(store, match_id)
    m, t = detail.match, detail.tournament
    state = game.new_match(m.seed, len(m.seats), t.options)
    out = []
    for n, action in enumerate(actions, 1):
        view = game.view(state, 0)
        out.append(
            (n, view["hand_number"] + 1, len(view.get("tricks", [])), game.to_act(state), action)
        )
        game.apply(state, action)
    return out


@pytest.mark.parametrize("name", sorted(set(all_games()) - {"kill"}))
def test_steps_are_told_in_words_by_hand_and_trick(
    site: tuple[str, Store, dict[str, int]], page: Page, name: str
) -> None:
    url, store, matches = site
    match_id = matches[name]
    game, detail, actions = replay_of(store, match_id)
    names = seat_names(detail)
    open_replay(page, url, match_id)
    moves = moves_at(store, match_id)
    plays = [m for m in moves if m[4].startswith("play:")]
    others = [m for m in moves if not m[4].startswith("play:")]
    hands = {m[1] for m in moves}
    expect(page.locator("#moves section.hand-steps")).to_have_count(len(hands))
    for n, hand, closed, seat, action in [plays[0], plays[len(plays) // 2], plays[-1]]:
        if game.sealed_cards(state_at(store, match_id, n)):
            continue  # a Kansas City face shown as its number: the table test covers it
        li = page.locator(f"#moves li#s{n}")
        card = action.split(":", 1)[1]
        assert codes(page, f"#moves li#s{n} .words [data-card]") == [card], n
        shown = li.locator(f"[data-card='{card}']").inner_text()
        expect(li.locator(".words")).to_have_text(f"{names[seat]} plays {shown}")
        group = page.locator(f"#moves section[data-hand='{hand}'] .group:has(li#s{n})")
        expect(group).to_have_attribute("data-group", f"trick {closed + 1}")
    bids = [m for m in others if m[4].startswith("bid:")]
    for n, _, _, seat, action in bids[:3]:  # Ninja Whist
        expect(page.locator(f"#moves li#s{n} .words")).to_have_text(
            f"{names[seat]} bids {action.split(':')[1]}"
        )


@pytest.mark.parametrize("name", sorted(all_games()))
@pytest.mark.parametrize("seat", ["", str(SEAT)])
def test_the_end_of_a_match_is_summed_up(
    site: tuple[str, Store, dict[str, int]], page: Page, name: str, seat: str
) -> None:
    url, store, matches = site
    match_id = matches[name]
    game, detail, actions = replay_of(store, match_id)
    names = seat_names(detail)
    record, result = detail.match.record or {}, detail.match.result or {}
    open_replay(page, url, match_id, seat)
    go_to(page, len(actions) - 1, len(actions))
    expect(page.locator("#summary")).to_be_empty()  # not before the end
    go_to(page, len(actions), len(actions))
    expect(page.locator("#summary h2")).to_have_text("Match over")
    state = state_at(store, match_id, len(actions))
    assert result["scores"] == list(game.result(state).scores)  # the stored result: the engine's
    ranks, scores = result["ranks"], result["scores"]
    order = sorted(range(len(names)), key=lambda s: (ranks[s], s))
    rows = page.locator("#standings tr[data-seat]")
    expect(rows).to_have_count(len(names))
    for row, s in enumerate(order):
        cells = rows.nth(row)
        expect(cells).to_have_attribute("data-seat", str(s))
        expect(cells.locator(".rank")).to_have_text(str(ranks[s]))
        expect(cells.locator(".bot")).to_have_text(names[s])
        expect(cells.locator(".score")).to_have_text(f"{scores[s]:g}")
        kinds = [f["kind"] for f in record["faults"] if f["seat"] == s]
        expect(cells.locator(".faults")).to_have_text(
            f"{len(kinds)} ({', '.join(kinds)})" if kinds else "0"
        )
        expect(cells.locator(".forfeit")).to_have_text(
            "forfeited" if record["forfeited"][s] else ""
        )
    winners = [names[s] for s in order if ranks[s] == 1]
    expect(page.locator("#headline")).to_contain_text(" and ".join(winners))
    if any(record["forfeited"]):
        expect(page.locator("#headline")).to_contain_text(f"{names[FORFEIT]} forfeited")
    hands = game.hand_records(state)
    points = page.locator("#hand-points tr[data-hand]")
    expect(points).to_have_count(len(hands))
    for k, hand in enumerate(hands):
        expect(points.nth(k).locator("td.num")).to_have_text([f"{p:g}" for p in hand["points"]])
    assert [sum(h["points"][s] for h in hands) for s in range(len(names))] == scores  # all hands


def test_keys_slider_and_step_links(site: tuple[str, Store, dict[str, int]], page: Page) -> None:
    url, store, matches = site
    match_id = matches["knaves"]
    _, _, actions = replay_of(store, match_id)
    open_replay(page, url, match_id)
    page.keyboard.press("Home")
    expect(page.locator("#step")).to_have_text("0")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#step")).to_have_text("1")
    expect(page.locator("#action .words")).to_have_attribute("data-action", actions[0])
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowLeft")
    expect(page.locator("#step")).to_have_text("1")
    page.get_by_role("button", name="next ▶").click()
    expect(page.locator("#step")).to_have_text("2")
    page.keyboard.press("End")
    expect(page.locator("#step")).to_have_text(str(len(actions)))
    page.locator("#slider").fill("7")
    expect(page.locator("#step")).to_have_text("7")
    assert page.url.endswith("#step=7")
    page.goto("about:blank")
    page.goto(f"{url}/matches/{match_id}#step=9&seat=2")
    expect(page.locator("#step")).to_have_text("9")
    expect(page.locator("#view")).to_have_value("2")
    expect(page.locator("#replay")).to_have_attribute("data-loaded", "seat-2")


def test_a_fault_is_shown_on_its_own_seat(
    site: tuple[str, Store, dict[str, int]], page: Page
) -> None:
    url, store, matches = site
    match_id = matches["knaves"]
    open_replay(page, url, match_id)
    go_to(page, 5, -1)  # the fault was charged at decision 4: the step after it shows it
    expect(page.locator("#seats .seat.faulted")).to_have_attribute("data-seat", "2")
    fault = page.locator("#faults .fault")
    expect(fault).to_have_text(
        f"fault unknown_action of seat 2 p2: {FAULT_DETAIL} (fallback: plays "
        + page.locator("#faults .fault [data-card='2C']").inner_text()
        + ")"
    )
    # On its step in the list too.
    expect(page.locator("#moves li#s5 .fault")).to_contain_text("unknown_action")
    assert codes(page, "#moves li#s5 .fault [data-card]") == ["2C"]
    expect(page.locator("#result tr[data-seat='2'] td").nth(4)).to_have_text("1")
    expect(page.locator("#result tr[data-seat='0'] td").nth(4)).to_have_text("0")
    go_to(page, 6, -1)
    expect(page.locator("#seats .seat.faulted")).to_have_count(0)


def test_bot_supplied_strings_stay_text(
    site: tuple[str, Store, dict[str, int]], page: Page
) -> None:
    url, store, matches = site
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    match_id = matches["knaves"]
    open_replay(page, url, match_id)
    go_to(page, 5, -1)
    expect(page.locator("#seats .seat[data-seat='0'] .bot")).to_contain_text(XSS)
    expect(page.locator("#result")).to_contain_text(XSS)
    tournament = store.get_match(match_id).tournament_id
    bot_page = f"/bots/{urllib.parse.quote(XSS)}"
    paths = (f"/tournaments/{tournament}", "/rankings/knaves", f"/matches/{match_id}", bot_page)
    for path in paths:
        page.goto(url + path)
        expect(page.get_by_text(XSS).first).to_be_visible()
        expect(page.locator("img")).to_have_count(0)
        inline = {"matches": 1, "bots": 1}.get(path.split("/")[1], 0)  # Replay.start / history
        expect(page.locator("script:not([src])")).to_have_count(inline)
    page.goto(url + bot_page)
    expect(page.locator("#versions .verdict")).to_have_text(VERDICT)
    expect(page.locator("#versions")).to_contain_text(XSS)
    assert dialogs == []


GLYPH_CHECK = """glyphs => {
  // A glyph no font has is drawn as the same .notdef box as a private-use code point.
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = 48;
  const g = canvas.getContext("2d");
  const font = getComputedStyle(document.body).fontFamily;
  const ink = (text) => {
    g.clearRect(0, 0, 48, 48);
    g.font = `32px ${font}`;
    g.fillText(text, 4, 36);
    return Array.from(g.getImageData(0, 0, 48, 48).data).join(",");
  };
  const missing = ink("\\uE000");
  const blank = ink(" ");
  return glyphs.filter(c => ink(c) === missing || ink(c) === blank);
}"""


def test_suit_and_navigation_glyphs_render(
    site: tuple[str, Store, dict[str, int]], page: Page
) -> None:
    url, _, matches = site
    glyphs: set[str] = set()
    for name in ("knives", "ninja-whist", "kansas-city", "kill", "knaves"):
        open_replay(page, url, matches[name])
        page.keyboard.press("End")
        texts = page.locator(".card, #controls button").all_text_contents()
        glyphs |= {c for text in texts for c in text if not c.isascii() and not c.isspace()}
    assert {"♠", "♥", "♦", "♣", "†", "⚔", "⚚", "★", "●", "◀", "▶"} <= glyphs
    assert page.evaluate(GLYPH_CHECK, sorted(glyphs)) == []
    assert page.evaluate(GLYPH_CHECK, ["⏮"]) == ["⏮"]  # the check does see a missing glyph


def objects_of(page: Page, selector: str, attr: str) -> list[str]:
    """The `attr` of every node `selector` finds, in order."""
    found: list[str] = page.locator(selector).evaluate_all(
        f"ns => ns.map(n => n.getAttribute('{attr}'))"
    )
    return found


def ninja_steps(store: Store, match_id: int) -> tuple[int, int]:
    """Steps of the Ninja Whist match: the first with a boost token on a card of the trick in
    play and a token banked, and the first with another seat than SEAT attaching a token."""
    game, detail, actions = replay_of(store, match_id)
    m, t = detail.match, detail.tournament
    state = game.new_match(m.seed, len(m.seats), t.options)
    boosted = attaching = 0
    for n, action in enumerate(actions, 1):
        game.apply(state, action)
        view, actor = game.view(state, 0), game.to_act(state)
        banked = any(a["tokens"] for a in view["score_areas"])
        if not boosted and banked and any(p["tokens"] for p in view["trick"]):
            boosted = n
        mine = game.view(state, actor) if actor is not None else {}
        if not attaching and actor != SEAT and mine.get("pending_tokens"):
            attaching = n
        if boosted and attaching:
            break
    return boosted, attaching


@pytest.mark.parametrize("seat", ["", str(SEAT)])
def test_ninja_whist_tokens_sit_by_their_owners(
    site: tuple[str, Store, dict[str, int]], page: Page, seat: str
) -> None:
    url, store, matches = site
    match_id = matches["ninja-whist"]
    game, detail, actions = replay_of(store, match_id)
    boosted, attaching = ninja_steps(store, match_id)
    assert boosted and attaching
    open_replay(page, url, match_id, seat)
    for n in (boosted, attaching):
        go_to(page, n, len(actions))
        state = state_at(store, match_id, n)
        for s in range(len(detail.match.seats)):
            # Each area as the seat shown knows it: the full table, as its owner does.
            view = game.view(state, int(seat) if seat else s)
            row = f"#seats .seat[data-seat='{s}'] .objects"
            won = objects_of(page, f"{row} .play-area .token", "data-token")
            assert won == view["play_areas"][s]["tokens"], (n, s)
            banked = objects_of(page, f"{row} .score-area .token", "data-token")
            assert banked == view["score_areas"][s]["tokens"], (n, s)
            exact = page.locator(f"{row} .score-tokens .score-token")
            expect(exact).to_have_count(view["score_tokens"][s])
        for p in game.view(state, 0)["trick"]:  # the boost tokens under their card
            play = f"#trick .play[data-seat='{p['seat']}']"
            assert objects_of(page, f"{play} .token", "data-token") == p["tokens"], n
            expect(page.locator(f"{play} .note")).to_have_count(1 if p["tokens"] else 0)
        actor = game.to_act(state)
        pending = game.view(state, actor)
        drawn = page.locator(f"#seats .seat[data-seat='{actor}'] .pending")
        if n == attaching and seat and int(seat) != actor:  # another seat's boost is its secret
            expect(drawn).to_have_count(0)
            expect(page.locator(f"[data-card='{pending['pending_card']}']")).to_have_count(0)
        elif n == attaching:
            expect(drawn.locator("[data-card]")).to_have_attribute(
                "data-card", pending["pending_card"]
            )
            tokens = objects_of(
                page, f"#seats .seat[data-seat='{actor}'] .pending .token", "data-token"
            )
            assert tokens == pending["pending_tokens"]


KILL_MARKED = {"kill", "claim_joker", "show_win", "show_trio", "claim_win", "claim_trio"}


def kill_marks(view: dict[str, Any], seat: int) -> list[tuple[str, str, str]]:
    """The (kind, by, success) of the round's events marked on `seat`: kills and Joker claims
    on their target, declarations on their maker."""
    return [
        (e["kind"], str(e["seat"]), "1" if e["success"] else "0")
        for e in view["events"]
        if e["kind"] in KILL_MARKED
        and (e["target"] if e["kind"] in ("kill", "claim_joker") else e["seat"]) == seat
    ]


def marked_events(game: Any, state: Any, rounds_before: int) -> list[dict[str, Any]]:
    """The events a Kill table marks after a move: the round's (seat 0's view: their public
    fields are every seat's), or those of the round the move ended, from its record."""
    if game.hands_finished(state) > rounds_before:
        events: list[dict[str, Any]] = game.hand_records(state)[-1]["events"]
        return events
    return list(game.view(state, 0)["events"])


@pytest.mark.parametrize("seat", ["", str(SEAT)])
def test_kill_claims_and_kills_are_marked_on_the_seat_they_concern(
    site: tuple[str, Store, dict[str, int]], page: Page, seat: str
) -> None:
    url, store, matches = site
    match_id = matches["kill"]
    game, detail, actions = replay_of(store, match_id)
    m, t = detail.match, detail.tournament
    state = game.new_match(m.seed, len(m.seats), t.options)
    marked: dict[str, int] = {}  # the first step showing each kind of marked event
    for n, action in enumerate(actions, 1):
        rounds = game.hands_finished(state)
        game.apply(state, action)
        for e in marked_events(game, state, rounds):
            if e["kind"] in KILL_MARKED:
                marked.setdefault(e["kind"], n)
    assert {"kill", "claim_joker"} <= set(marked), marked
    open_replay(page, url, match_id, seat)
    for kind, n in sorted(marked.items()):
        go_to(page, n, len(actions))
        state = state_at(store, match_id, n)
        view = game.view(state, int(seat) if seat else 0)
        before = game.hands_finished(state_at(store, match_id, n - 1))
        events = {"events": marked_events(game, state, before)}
        for s in range(len(m.seats)):
            row = f"#seats .seat[data-seat='{s}'] .objects"
            shown = page.locator(f"{row} .marker[data-kind]").evaluate_all(
                "ns => ns.map(n => [n.dataset.kind, n.dataset.by, n.dataset.success])"
            )
            assert [tuple(x) for x in shown] == kill_marks(events, s), (kind, n, s)
            expect(page.locator(f"{row} .marker.immune")).to_have_count(
                1 if view["immune"][s] else 0
            )
        expect(page.locator(".marker[data-kind]")).to_have_count(
            sum(len(kill_marks(events, s)) for s in range(len(m.seats)))
        )
        names = seat_names(detail)
        on_target = ".marker[data-kind='kill'], .marker[data-kind='claim_joker']"
        for by, text in page.locator(on_target).evaluate_all(
            "ns => ns.map(n => [n.dataset.by, n.textContent])"
        ):  # a kill or a Joker claim, on its target, names who made it
            assert names[int(by)] in text, (kind, n, by, text)


def knives_steps(store: Store, match_id: int) -> tuple[int, int]:
    """Steps of the Knives match: the first with one card banked, and the next one with the
    bank phase over."""
    game, detail, actions = replay_of(store, match_id)
    m, t = detail.match, detail.tournament
    state = game.new_match(m.seed, len(m.seats), t.options)
    half = 0
    for n, action in enumerate(actions, 1):
        game.apply(state, action)
        banker = game.view(state, 0)["banker"]
        banked = game.view(state, banker)["banked"] if banker >= 0 else []
        if not half and len(banked) == 1:
            half = n
        elif half and len(banked) == 2:
            return half, n
    raise AssertionError("no hand of the seeded Knives match had a banker")


@pytest.mark.parametrize("who", ["full", "banker", "other"])
def test_knives_banked_cards_lie_by_the_banker_face_up_only_to_him(
    site: tuple[str, Store, dict[str, int]], page: Page, who: str
) -> None:
    url, store, matches = site
    match_id = matches["knives"]
    game, detail, actions = replay_of(store, match_id)
    half, banked_all = knives_steps(store, match_id)
    banker = game.view(state_at(store, match_id, half), 0)["banker"]
    viewer = {"full": None, "banker": banker, "other": (banker + 1) % len(detail.match.seats)}[who]
    open_replay(page, url, match_id, "" if viewer is None else str(viewer))

    go_to(page, 0, len(actions))  # the bank lies by the dealer, face down to every seat
    start = game.view(state_at(store, match_id, 0), 0)
    bank = page.locator(f"#seats .seat[data-seat='{start['dealer']}'] .objects .pile.bank")
    expect(bank).to_have_count(1)
    expect(bank.locator(".card.back")).to_have_count(len(state_at(store, match_id, 0).bank))
    expect(page.locator(".objects .pile")).to_have_count(1)

    for n in (half, banked_all):
        go_to(page, n, len(actions))
        state = state_at(store, match_id, n)
        cards = game.view(state, banker)["banked"]  # what the banker was sent
        pile = page.locator(f"#seats .seat[data-seat='{banker}'] .objects .pile.banked")
        expect(page.locator(".objects .pile.banked")).to_have_count(1)
        expect(pile).to_have_attribute("data-count", str(len(cards)))
        if viewer is None or viewer == banker:
            assert codes(page, f"#seats .seat[data-seat='{banker}'] .pile.banked [data-card]") == (
                cards
            ), n
            expect(pile.locator(".card.back")).to_have_count(0)
        else:
            assert game.view(state, viewer)["banked"] == []  # the seat was sent none of them
            expect(pile.locator(".card.back")).to_have_count(len(cards))
            expect(pile.locator("[data-card]")).to_have_count(0)
            shown = codes(page, "#replay [data-card]:not(#moves [data-card])")
            assert not set(cards) & set(shown), (n, sorted(set(cards) & set(shown)))
