"""The web page: leaderboards per game, bot pages, match lists and a replay viewer."""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from games.base import GameSpec
from games.errors import UnknownGameError
from games.registry import all_games, get_game
from server.match.live import LIVE, LiveMatches
from server.views.replay import replay_json
from server.views.transcript import seat_code, seat_names
from server.web.bot import author_label, rating_series, successor, version_label
from server.web.ladder import ladder_page
from server.web.live import Pulse, stream
from server.web.metrics import metrics_route
from server.web.spectate import DELAY, spectate
from server.web.tournament import (
    LISTED,
    MatchFilter,
    TournamentView,
    TournamentViews,
    ranking_rows,
)
from tournaments.errors import NotFoundError
from tournaments.models import MatchStatus
from tournaments.standings import INTERVAL
from tournaments.store import LiveRead, Store, web_queries

HERE = Path(__file__).parent
TEMPLATES = Jinja2Templates(directory=str(HERE / "templates"))
STATIC = HERE / "static"
RECENT = 30  # matches on a bot page
REPLAYS_CACHED = 32  # finished matches never change: their replay JSON is kept
FINAL = (MatchStatus.FINISHED.value, MatchStatus.VOIDED.value)
FIRST_ENTRANTS = 4  # entrants named per tournament on the home page
FORMAT_WORDS = {"round_robin": "round robin", "gauntlet": "gauntlet", "ladder": "ladder"}
DEAL_IN_PLAY = "the replay opens once every rotation of this deal has been played"


def make_app(store: Store, lives: LiveMatches = LIVE) -> Starlette:
    """The web application over one store (and the running matches of this process); its
    handlers are sync, so Starlette runs them in a thread pool and the referee's event loop
    never waits on the database."""
    return Starlette(
        routes=Site(store, lives).routes(),
        middleware=[Middleware(GZipMiddleware, minimum_size=1000)],
        exception_handlers={NotFoundError: not_found},
    )


def game_of(request: Request) -> GameSpec:
    """The game a /…/{game} URL names; 404 for none."""
    try:
        return get_game(request.path_params["game"]).spec
    except UnknownGameError as exc:
        raise HTTPException(404, str(exc)) from None


async def not_found(request: Request, exc: Exception) -> Response:
    """A bot, tournament or match a handler did not find: 404 with the store's words, as
    Starlette answers an HTTPException(404)."""
    return PlainTextResponse(str(exc), status_code=404)


def entrants_line(entrants: web_queries.Entrants) -> dict[str, Any]:
    """A tournament's field as the home page lists it: how many entrants, the first few by
    name with their version ("alpha v2"), and how many more."""
    names = [f"{n} {version_label(n, v)}".strip() for n, v in entrants.first]
    return {"count": entrants.count, "names": names, "more": entrants.count - len(names)}


class ReplayCache:
    """Replay JSON of finished matches, which never change: the last REPLAYS_CACHED kept."""

    def __init__(self) -> None:
        self._bodies: OrderedDict[tuple[int, int | None], bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[int, int | None]) -> bytes | None:
        """A kept body, now the most recent; None if not kept."""
        with self._lock:
            cached = self._bodies.get(key)
            if cached is not None:
                self._bodies.move_to_end(key)
        return cached

    def put(self, key: tuple[int, int | None], body: bytes) -> None:
        """Keep a body, dropping the least recent past REPLAYS_CACHED."""
        with self._lock:
            self._bodies[key] = body
            while len(self._bodies) > REPLAYS_CACHED:
                self._bodies.popitem(last=False)


class Site:
    """The pages and the API of one store: a handler per route; a NotFoundError raised in one
    is answered 404 by not_found."""

    def __init__(self, store: Store, lives: LiveMatches) -> None:
        self.store = store
        self.lives = lives
        self.pulse = Pulse(lambda: web_queries.pulse(store))
        self.views = TournamentViews(store)
        self.replays = ReplayCache()

    def routes(self) -> list[BaseRoute]:
        """Every page, API route and the static files."""
        return [
            Route("/", self.home),
            Route("/rankings/{game}", self.rankings),
            Route("/bots/{name}", self.bot),
            Route("/tournaments/{tournament:int}", self.tournament),
            Route("/api/tournaments/{tournament:int}", self.tournament_json),
            Route("/api/tournaments/{tournament:int}/events", self.tournament_events),
            Route("/api/rankings/{game}/events", self.rankings_events),
            Route("/ladders/{game}", self.ladder),
            Route("/api/ladders/{game}/events", self.ladder_events),
            Route("/matches/{match:int}", self.match),
            Route("/api/matches/{match:int}/replay", self.replay),
            Route("/api/matches/{match:int}/live", self.match_live),
            metrics_route(self.store),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ]

    def page(self, request: Request, template: str, **context: Any) -> Response:
        """A template rendered with the games of the menu."""
        return TEMPLATES.TemplateResponse(request, template, {"games": all_games(), **context})

    def home(self, request: Request) -> Response:
        """/: the latest tournaments."""
        tournaments = web_queries.latest_tournaments(self.store, RECENT)
        ids = [p.tournament.id or 0 for p in tournaments]
        entrants = web_queries.tournament_entrants(self.store, ids, FIRST_ENTRANTS)
        fields = {tid: entrants_line(e) for tid, e in entrants.items()}
        return self.page(
            request, "home.html", tournaments=tournaments, fields=fields, formats=FORMAT_WORDS
        )

    def board(self, request: Request) -> dict[str, Any]:
        """The game of a /rankings/{game} URL (404 if none) and its ranking rows."""
        game = game_of(request)
        return {"game": game, "rows": self.ranking_rows(game.name)}

    def ranking_rows(self, game: str) -> list[dict[str, Any]]:
        """A game's leaderboard rows, each bot with its version and author."""
        rows = self.store.rankings(game)
        return ranking_rows(rows, web_queries.bot_tags(self.store, [r.bot_id for r in rows]))

    def rankings(self, request: Request) -> Response:
        """/rankings/{game}: a game's leaderboard."""
        return self.page(request, "rankings.html", **self.board(request))

    def rankings_events(self, request: Request) -> Response:
        """/api/rankings/{game}/events: the leaderboard's rows as they change."""
        name = self.board(request)["game"].name
        return stream(self.pulse, lambda: {"rows": self.ranking_rows(name)}, "rankings")

    def ladder(self, request: Request) -> Response:
        """/ladders/{game}: the game's ladder, its field ranked and its latest sets."""
        game = game_of(request)
        ladder = ladder_page(self.store, game.name)
        return self.page(request, "ladder.html", game=game, ladder=ladder)

    def ladder_events(self, request: Request) -> Response:
        """/api/ladders/{game}/events: the ladder's page data as it changes."""
        name = game_of(request).name
        return stream(self.pulse, lambda: ladder_page(self.store, name) or {}, "ladder")

    def bot(self, request: Request) -> Response:
        """/bots/{name}: a bot's author and versions, its ratings, their history, its faults
        and recent matches."""
        # A retired bot's page still answers: its matches are listed everywhere else.
        profile = self.store.bot_profile(request.path_params["name"], recent=0)
        found = profile.bot
        assert found.id is not None
        history = {
            r.game: rating_series(web_queries.bot_history(self.store, found.id, r.game))
            for r in profile.ratings
        }
        versions = web_queries.bot_versions(self.store, found)
        return self.page(
            request,
            "bot.html",
            bot=found,
            author=author_label(profile.author),
            versions=versions,
            successor=successor(versions, found.version) if found.removed else None,
            ratings=profile.ratings,
            history=history,
            faults=profile.faults,
            recent=web_queries.recent_matches(self.store, found.id, RECENT),
        )

    def tournament_view(self, request: Request) -> TournamentView:
        """The tournament of a /tournaments/{tournament} URL."""
        return self.views.get(int(request.path_params["tournament"]))

    def tournament(self, request: Request) -> Response:
        """/tournaments/{tournament}: standings, live table and the filtered matches."""
        view = self.tournament_view(request)
        filters = MatchFilter.from_query(request.query_params)
        matching = [r for r in view.matches if filters.keep(r)]
        everyone = request.query_params.get("cross") == "all"
        return self.page(
            request,
            "tournament.html",
            t=view.rows.tournament,
            game=get_game(view.rows.tournament.game).spec,
            result=view.result,
            live=view.live_all if everyone else view.live,
            interval=INTERVAL,
            filters=filters,
            statuses=[s.value for s in MatchStatus],
            listed=matching[:LISTED],
            matching=len(matching),
        )

    def tournament_json(self, request: Request) -> Response:
        """/api/tournaments/{tournament}: the tournament's result as JSON."""
        return JSONResponse(self.tournament_view(request).result.to_json())

    def tournament_events(self, request: Request) -> Response:
        """/api/tournaments/{tournament}/events: its live table as it changes."""
        tid = self.tournament_view(request).rows.tournament.id or 0
        everyone = request.query_params.get("cross") == "all"
        views = self.views
        return stream(
            self.pulse,
            lambda: views.get(tid).live_all if everyone else views.get(tid).live,
            "tournament",
        )

    def match(self, request: Request) -> Response:
        """/matches/{match}: a match's seats, result, faults and its replay viewer."""
        detail = self.store.match_detail(int(request.path_params["match"]))
        record = detail.match.record or {}
        names = seat_names(detail)
        faults = [0] * len(names)
        for fault in record.get("faults", []):
            if 0 <= fault.get("seat", -1) < len(faults):
                faults[fault["seat"]] += 1
        forfeited = list(record.get("forfeited") or []) + [False] * len(names)
        return self.page(
            request,
            "match.html",
            detail=detail,
            game=get_game(detail.tournament.game).spec,
            names=names,
            result=detail.match.result or {},
            faults=faults,
            forfeited=forfeited,
            code=seat_code(record, len(names)),
            decisions=len(record.get("actions", [])),
            in_play=web_queries.deal_in_play(self.store, detail.match.id or 0),
            in_play_text=DEAL_IN_PLAY,
            watchable=detail.match.status not in FINAL,  # a pending match goes live when played
            delay=DELAY,
        )

    def match_live(self, request: Request) -> Response:
        """/api/matches/{match}/live: a running match's steps, delayed, as they happen, played
        here or by another process."""
        match_id = int(request.path_params["match"])
        store = self.store
        store.match_detail(match_id)  # NotFoundError: 404

        def read() -> tuple[bool, LiveRead]:
            found = store.read_live(match_id)
            return found.status in FINAL, found

        return spectate(
            self.lives,
            match_id,
            lambda: web_queries.deal_in_play(store, match_id, others=True),
            read,
        )

    def replay(self, request: Request) -> Response:
        """/api/matches/{match}/replay[?seat=N]: the replay JSON (409 while its deal is in play)."""
        match_id = int(request.path_params["match"])
        seat = request.query_params.get("seat", "")
        focus = int(seat) if seat.isdigit() else None
        if seat and focus is None:
            raise HTTPException(400, f"seat must be a seat number, got {seat!r}")
        key = (match_id, focus)
        cached = self.replays.get(key)
        if cached is None:
            if web_queries.deal_in_play(self.store, match_id):
                # Its rotations share the deal: the table stays hidden until all are played.
                raise HTTPException(409, DEAL_IN_PLAY)
            detail = self.store.match_detail(match_id)
            try:
                body = replay_json(detail, focus)
            except ValueError as exc:
                raise HTTPException(400, str(exc)) from None
            cached = bytes(JSONResponse(body).body)
            if detail.match.status in FINAL:
                self.replays.put(key, cached)
        return Response(cached, media_type="application/json")
