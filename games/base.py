"""The common game interface: specs with options, actions, match states and results."""

from __future__ import annotations

import copy
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, fields
from typing import Any, Generic, TypeVar

from games.errors import BadOptionError, IllegalActionError, UnknownOptionError

OptionValue = bool | int | str
View = dict[str, Any]
HandRecord = dict[str, Any]


def by_constructor(frozen: Any) -> tuple[type[Any], tuple[Any, ...]]:
    """How copy and pickle rebuild a frozen dataclass: its constructor with its fields (their
    default restores fields one by one, which a frozen class compiled by mypyc refuses)."""
    return type(frozen), tuple(getattr(frozen, f.name) for f in fields(frozen))


@dataclass(frozen=True)
class Option:
    """A named referee parameter of a game, its default and the values allowed."""

    name: str
    default: OptionValue
    allowed: Sequence[OptionValue]
    doc: str

    def describe_allowed(self) -> str:
        """The allowed values as text for error messages and docs."""
        if isinstance(self.allowed, range):
            return f"integers {self.allowed.start}..{self.allowed.stop - 1}"
        return ", ".join(repr(v) for v in self.allowed)

    def check(self, value: object) -> OptionValue:
        """The value if allowed, else a BadOptionError naming option, value and what is allowed."""
        if isinstance(self.default, bool) != isinstance(value, bool) or not isinstance(
            value, bool | int | str
        ):
            raise BadOptionError(self.name, value, self.describe_allowed())
        if value not in self.allowed:
            raise BadOptionError(self.name, value, self.describe_allowed())
        return value

    def __reduce__(self) -> tuple[type[Any], tuple[Any, ...]]:
        """Copied and pickled through the constructor (see by_constructor)."""
        return by_constructor(self)


@dataclass(frozen=True)
class GameSpec:
    """What a game is: name, seat counts, options with defaults and the default clock."""

    name: str
    title: str
    seat_counts: tuple[int, ...]
    default_seats: int
    options: tuple[Option, ...] = ()
    move_ms: int = 1000
    summary: str = ""

    def option(self, name: str) -> Option:
        """The option called name."""
        for opt in self.options:
            if opt.name == name:
                return opt
        raise UnknownOptionError(self.name, name, "…", self.described_options())

    def option_names(self) -> list[str]:
        """Names of every option."""
        return [opt.name for opt in self.options]

    def described_options(self) -> list[str]:
        """Every option as `name (allowed; default D)`, for messages."""
        return [f"{o.name} ({o.describe_allowed()}; default {o.default})" for o in self.options]

    def defaults(self) -> dict[str, OptionValue]:
        """Every option at its default."""
        return {opt.name: opt.default for opt in self.options}

    def resolve(self, options: Mapping[str, object] | None) -> dict[str, OptionValue]:
        """Defaults overlaid with the given options, each checked."""
        resolved = self.defaults()
        for name, value in (options or {}).items():
            if name not in resolved:
                raise UnknownOptionError(self.name, name, value, self.described_options())
            resolved[name] = self.option(name).check(value)
        return resolved

    def check_seats(self, seats: int | None) -> int:
        """The seat count if this game allows it."""
        n = self.default_seats if seats is None else seats
        if isinstance(n, bool) or not isinstance(n, int) or n not in self.seat_counts:
            allowed = ", ".join(str(c) for c in self.seat_counts)
            raise BadOptionError("seats", n, allowed)
        return n

    def __reduce__(self) -> tuple[type[Any], tuple[Any, ...]]:
        """Copied and pickled through the constructor (see by_constructor)."""
        return by_constructor(self)


@dataclass(frozen=True, eq=False, slots=True)
class Action:
    """One legal decision: a stable string id plus typed fields (unused fields stay empty)."""

    id: str
    kind: str
    card: str = ""
    cards: tuple[str, ...] = ()
    suit: str = ""
    number: int = -1
    seat: int = -1
    token: str = ""

    def fields(self) -> dict[str, Any]:
        """The typed fields that are set, for docs and transcripts."""
        out: dict[str, Any] = {"id": self.id, "kind": self.kind}
        if self.card:
            out["card"] = self.card
        if self.cards:
            out["cards"] = list(self.cards)
        if self.suit:
            out["suit"] = self.suit
        if self.number >= 0:
            out["number"] = self.number
        if self.seat >= 0:
            out["seat"] = self.seat
        if self.token:
            out["token"] = self.token
        return out

    def __reduce__(self) -> tuple[type[Any], tuple[Any, ...]]:
        """Copied and pickled through the constructor (see by_constructor)."""
        return by_constructor(self)


@dataclass(frozen=True)
class MatchResult:
    """Final scores and placements; equal scores share a placement (1, 1, 3)."""

    scores: tuple[int, ...]
    ranks: tuple[int, ...]

    def __reduce__(self) -> tuple[type[Any], tuple[Any, ...]]:
        """Copied and pickled through the constructor (see by_constructor)."""
        return by_constructor(self)


def competition_ranks(scores: Sequence[float]) -> tuple[int, ...]:
    """Standard competition ranking, highest score first: ties share (1, 1, 3)."""
    return tuple(1 + sum(1 for other in scores if other > s) for s in scores)


@dataclass
class MatchState:
    """Fields every game's mutable match state has; games subclass it."""

    seed: int
    seats: int
    options: dict[str, OptionValue]
    history: list[str] = field(default_factory=list)
    legal_cache: list[Action] | None = field(default=None, repr=False)
    # source list, its length then, and the tuple built from it (see shared_view)
    view_memo: dict[str, tuple[list[Any], int, tuple[Any, ...]]] = field(
        default_factory=dict, repr=False, compare=False
    )


S = TypeVar("S", bound=MatchState)


def shared_view(
    state: MatchState, key: str, source: list[Any], build: Callable[[Any], Any]
) -> tuple[Any, ...]:
    """A read-only view of an append-only list (items never change once appended), one tuple
    shared by every view until the list grows or is replaced (so the referee converts it to
    protobuf once, not per request). A grown list's tuple extends the last one: the items it
    had are the same objects, and only the new ones are built."""
    memo = state.view_memo.get(key)
    if memo is not None and memo[0] is source:
        if memo[1] == len(source):
            return memo[2]
        if memo[1] < len(source):
            value = memo[2] + tuple(build(item) for item in source[memo[1] :])
            state.view_memo[key] = (source, len(source), value)
            return value
    value = tuple(build(item) for item in source)
    state.view_memo[key] = (source, len(source), value)
    return value


def with_own_cards(entry: dict[str, Any]) -> dict[str, Any]:
    """A copy of a trick-like entry with its own list of cards (views never alias state)."""
    return dict(entry, cards=list(entry["cards"]))


class Game(ABC, Generic[S]):
    """A rules engine the referee can drive without knowing which game it is."""

    spec: GameSpec

    def new_match(
        self, seed: int, seats: int | None = None, options: Mapping[str, object] | None = None
    ) -> S:
        """A new match, fully determined by seed, seat count and options."""
        n = self.spec.check_seats(seats)
        return self._new(int(seed), n, self.spec.resolve(options))

    def replay(
        self,
        seed: int,
        seats: int | None,
        options: Mapping[str, object] | None,
        action_ids: Sequence[str],
    ) -> S:
        """The state reached by applying action ids to a new match."""
        state = self.new_match(seed, seats, options)
        for action_id in action_ids:
            self.apply(state, action_id)
        return state

    def legal_actions(self, state: S) -> list[Action]:
        """Every action the seat to act may take now (empty once the match is over)."""
        if state.legal_cache is None:
            state.legal_cache = self._legal(state) if self.to_act(state) is not None else []
        return state.legal_cache

    def apply(self, state: S, action: Action | str, seat: int | None = None) -> None:
        """Apply a legal action; anything else raises IllegalActionError and changes nothing."""
        action_id = action if isinstance(action, str) else action.id
        actor = self.to_act(state)
        if actor is None:
            raise IllegalActionError(action_id, [], "the match is over")
        legal = self.legal_actions(state)
        if seat is not None and seat != actor:
            raise IllegalActionError(action_id, [], f"seat {seat} is not to act; seat {actor} is")
        chosen = None
        for candidate in legal:
            if candidate is action or candidate.id == action_id:
                chosen = candidate
                break
        if chosen is None:
            raise IllegalActionError(action_id, [a.id for a in legal])
        state.legal_cache = None
        state.history.append(chosen.id)
        self._apply(state, chosen)

    def is_over(self, state: S) -> bool:
        """True once the match has ended."""
        return self.to_act(state) is None

    def result(self, state: S) -> MatchResult:
        """Scores and shared placements (provisional while the match is running)."""
        scores = tuple(self.scores(state))
        return MatchResult(scores, competition_ranks(scores))

    def public_label(self, state: S, action_id: str) -> str:
        """How an action by the seat to act may be shown to everyone once it is made (spectators,
        transcripts, other seats' replays): nothing some seat cannot tell from its own view
        just after it. Games override it where an action id names a secret card, or a choice
        that is collected and published later (then the publishing action tells it)."""
        return action_id

    def sealed_cards(self, state: S) -> set[str]:
        """Cards of the hand in play whose faces the rules never publish, not even in its record."""
        return set()

    def sealed_view(self, state: S, seat: int, sealed: AbstractSet[str]) -> View:
        """The seat's view with the faces of the sealed cards masked (the full-table replay's)."""
        return self.view(state, seat)

    def sealed_action(self, action_id: str, sealed: AbstractSet[str]) -> str:
        """An action id with the faces of the sealed cards masked (the full-table replay's)."""
        return action_id

    def hands_finished(self, state: S) -> int:
        """How many hands have finished (cheap; engines that build records on demand
        override it)."""
        return len(self.hand_records(state))

    def clone(self, state: S) -> S:
        """An independent copy of the state."""
        return copy.deepcopy(state)

    @abstractmethod
    def _new(self, seed: int, seats: int, options: dict[str, OptionValue]) -> S:
        """Deal the first hand of a new match."""

    @abstractmethod
    def to_act(self, state: S) -> int | None:
        """The seat whose decision is awaited, or None once the match is over."""

    @abstractmethod
    def _legal(self, state: S) -> list[Action]:
        """Compute the legal actions of the seat to act."""

    @abstractmethod
    def _apply(self, state: S, action: Action) -> None:
        """Apply an action already known to be legal."""

    @abstractmethod
    def view(self, state: S, seat: int) -> View:
        """Everything the seat may know now, as JSON-ready data, and nothing else (tuples in
        it may be shared between views: read-only)."""

    @abstractmethod
    def scores(self, state: S) -> list[int]:
        """Cumulative match scores per seat."""

    @abstractmethod
    def hand_records(self, state: S) -> list[HandRecord]:
        """The full public record of every finished hand, in order (RULINGS 0.6)."""

    @abstractmethod
    def decision_bound(self, seats: int, options: Mapping[str, OptionValue]) -> int:
        """An upper bound on the decisions of any match with these settings."""

    @abstractmethod
    def all_action_ids(self, state: S) -> list[str]:
        """Every action id that can ever occur in this match (legal or not now)."""

    @abstractmethod
    def hidden_cards(self, state: S, seat: int) -> set[str]:
        """Card codes whose identity the seat cannot know now (other hands, stock, bank)."""

    @abstractmethod
    def resample(self, state: S, seat: int, rng: random.Random) -> S:
        """A copy with the cards hidden from seat re-dealt among their holders, consistent
        with everything the seat has seen."""
