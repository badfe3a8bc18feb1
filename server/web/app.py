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
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from games.errors import UnknownGameError
from games.registry import all_games, get_game
from server.match.live import LIVE, LiveMatches
from server.views.replay import replay_json
from server.views.transcript import seat_code, seat_names
from server.web.bot import rating_series
from server.web.live import Pulse, stream
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
from tournaments.store import Store, web_queries

HERE = Path(__file__).parent
TEMPLATES = Jinja2Templates(directory=str(HERE / "templates"))
STATIC = HERE / "static"
RECENT = 30  # matches on a bot page
REPLAYS_CACHED = 32  # finished matches never change: their replay JSON is kept
FINAL = (MatchStatus.FINISHED.value, MatchStatus.VOIDED.value)
DEAL_IN_PLAY = "the replay opens once every rotation of this deal has been played"


def make_app(store: Store, lives: LiveMatches = LIVE) -> Starlette:
    """The web application over one store (and the running matches of this process); its
    handlers are sync, so Starlette runs them in a thread pool and the referee's event loop
    never waits on the database."""

    pulse = Pulse(lambda: web_queries.pulse(store))

    def page(request: Request, template: str, **context: Any) -> Response:
        return TEMPLATES.TemplateResponse(request, template, {"games": all_games(), **context})

    def home(request: Request) -> Response:
        return page(request, "home.html", tournaments=web_queries.latest_tournaments(store, RECENT))

    def board(request: Request) -> dict[str, Any]:
        try:
            game = get_game(request.path_params["game"]).spec
        except UnknownGameError as exc:
            raise HTTPException(404, str(exc)) from None
        return {"game": game, "rows": ranking_rows(store.rankings(game.name))}

    def rankings(request: Request) -> Response:
        return page(request, "rankings.html", **board(request))

    def rankings_events(request: Request) -> Response:
        name = board(request)["game"].name
        return stream(pulse, lambda: {"rows": ranking_rows(store.rankings(name))}, "rankings")

    def bot(request: Request) -> Response:
        try:
            # A retired bot's page still answers: its matches are listed everywhere else.
            profile = store.bot_profile(request.path_params["name"], recent=0)
        except NotFoundError as exc:
            raise HTTPException(404, str(exc)) from None
        found = profile.bot
        assert found.id is not None
        history = {
            r.game: rating_series(web_queries.bot_history(store, found.id, r.game))
            for r in profile.ratings
        }
        return page(
            request,
            "bot.html",
            bot=found,
            ratings=profile.ratings,
            history=history,
            faults=profile.faults,
            recent=web_queries.recent_matches(store, found.id, RECENT),
        )

    views = TournamentViews(store)

    def tournament_view(request: Request) -> TournamentView:
        try:
            return views.get(int(request.path_params["tournament"]))
        except NotFoundError as exc:
            raise HTTPException(404, str(exc)) from None

    def tournament(request: Request) -> Response:
        view = tournament_view(request)
        filters = MatchFilter.from_query(request.query_params)
        matching = [r for r in view.matches if filters.keep(r)]
        everyone = request.query_params.get("cross") == "all"
        return page(
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

    def tournament_json(request: Request) -> Response:
        return JSONResponse(tournament_view(request).result.to_json())

    def tournament_events(request: Request) -> Response:
        tid = tournament_view(request).rows.tournament.id or 0
        everyone = request.query_params.get("cross") == "all"
        return stream(
            pulse,
            lambda: views.get(tid).live_all if everyone else views.get(tid).live,
            "tournament",
        )

    def match(request: Request) -> Response:
        try:
            detail = store.match_detail(int(request.path_params["match"]))
        except NotFoundError as exc:
            raise HTTPException(404, str(exc)) from None
        record = detail.match.record or {}
        names = seat_names(detail)
        faults = [0] * len(names)
        for fault in record.get("faults", []):
            if 0 <= fault.get("seat", -1) < len(faults):
                faults[fault["seat"]] += 1
        forfeited = list(record.get("forfeited") or []) + [False] * len(names)
        return page(
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
            in_play=web_queries.deal_in_play(store, detail.match.id or 0),
            in_play_text=DEAL_IN_PLAY,
            watchable=detail.match.status not in FINAL,  # a pending match goes live when played
            delay=DELAY,
        )

    def match_live(request: Request) -> Response:
        match_id = int(request.path_params["match"])
        try:
            store.match_detail(match_id)
        except NotFoundError as exc:
            raise HTTPException(404, str(exc)) from None

        def ended() -> bool:
            return store.get_match(match_id).status in FINAL

        return spectate(
            lives,
            pulse,
            match_id,
            lambda: web_queries.deal_in_play(store, match_id, others=True),
            ended,
        )

    replays: OrderedDict[tuple[int, int | None], bytes] = OrderedDict()
    replays_lock = threading.Lock()

    def replay(request: Request) -> Response:
        match_id = int(request.path_params["match"])
        seat = request.query_params.get("seat", "")
        focus = int(seat) if seat.isdigit() else None
        if seat and focus is None:
            raise HTTPException(400, f"seat must be a seat number, got {seat!r}")
        key = (match_id, focus)
        with replays_lock:
            cached = replays.get(key)
            if cached is not None:
                replays.move_to_end(key)
        if cached is None:
            if web_queries.deal_in_play(store, match_id):
                # Its rotations share the deal: the table stays hidden until all are played.
                raise HTTPException(409, DEAL_IN_PLAY)
            try:
                detail = store.match_detail(match_id)
                body = replay_json(detail, focus)
            except NotFoundError as exc:
                raise HTTPException(404, str(exc)) from None
            except ValueError as exc:
                raise HTTPException(400, str(exc)) from None
            cached = bytes(JSONResponse(body).body)
            if detail.match.status in FINAL:
                with replays_lock:
                    replays[key] = cached
                    while len(replays) > REPLAYS_CACHED:
                        replays.popitem(last=False)
        return Response(cached, media_type="application/json")

    routes = [
        Route("/", home),
        Route("/rankings/{game}", rankings),
        Route("/bots/{name}", bot),
        Route("/tournaments/{tournament:int}", tournament),
        Route("/api/tournaments/{tournament:int}", tournament_json),
        Route("/api/tournaments/{tournament:int}/events", tournament_events),
        Route("/api/rankings/{game}/events", rankings_events),
        Route("/matches/{match:int}", match),
        Route("/api/matches/{match:int}/replay", replay),
        Route("/api/matches/{match:int}/live", match_live),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    return Starlette(routes=routes, middleware=[Middleware(GZipMiddleware, minimum_size=1000)])
