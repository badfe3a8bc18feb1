"""The score-margin model: a Gaussian on each bot's per-set score margin, one update a set.

It is not the rating of record (that is TrueSkill, tournaments/ratings.py). It is the
baseline bench/ranking_quality.py measures TrueSkill against: it orders a field with about
a third fewer matches. Its sigma comes from a fixed beta, so it is not a calibrated
uncertainty and cardshark shows it nowhere; what `tournament show`, `compare` and
`--until-confident` show of the margins (intervals, P(above next)) is computed from the
observed spread of the per-set scores instead (tournaments/standings.py, confidence.py).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence

from tournaments.errors import ResultError
from tournaments.ratings import Rating, RatingChange, SeatOutcome, TrueSkillSettings


def set_scores(
    matches: Sequence[tuple[Sequence[int], Sequence[SeatOutcome]]],
) -> tuple[list[int], list[float]]:
    """Bots of a set (first seen first) and each one's rating score: points a match.

    A forfeited seat scores at most the lowest score of the seats that played on in that
    match, so a forfeit never gains from the referee's fallback play.
    """
    totals: dict[int, float] = {}
    counts: dict[int, int] = {}
    for bot_ids, outcomes in matches:
        if len(bot_ids) != len(outcomes):
            raise ResultError(f"a match has {len(bot_ids)} seats but {len(outcomes)} outcomes")
        played_on = [float(o.score) for o in outcomes if not o.forfeited]
        floor = min(played_on) if played_on else math.inf
        for bot, outcome in zip(bot_ids, outcomes, strict=True):
            score = float(outcome.score)
            if outcome.forfeited:
                score = min(score, floor)
            totals[bot] = totals.get(bot, 0.0) + score
            counts[bot] = counts.get(bot, 0) + 1
    bots = list(totals)
    return bots, [totals[b] / counts[b] for b in bots]


def rate_margins(
    settings: TrueSkillSettings, before: Sequence[Rating], scores: Sequence[float], matches: int
) -> list[Rating]:
    """New ratings after a set where seat i scored scores[i] points a match over `matches`.

    Only the margins inform: bot i observes its skill as the table's mean rating plus
    scores[i] - mean(scores), with noise variance beta^2 (k-1) / (k matches) at k seats;
    each bot's Gaussian is updated by that one observation. No drift is added.
    """
    k = len(before)
    if k < 2 or len(scores) != k:
        raise ResultError(
            f"a rated set needs at least 2 bots and one score per bot "
            f"(got {k} ratings, {len(scores)} scores)"
        )
    if matches < 1:
        raise ResultError(f"a rated set needs at least one match, not {matches}")
    for score in scores:
        if not math.isfinite(score):
            raise ResultError(f"a set score must be a finite number, not {score!r}")
    # Taking the table's mean rating as known (rather than integrating it out) weighs every
    # set alike, as a running mean does: the exact contrast posterior reduced to marginals
    # over-weighted late sets and needed ~20 % more matches to order a field.
    precision = matches * k / (settings.beta**2 * (k - 1))
    centre = math.fsum(scores) / k
    level = math.fsum(r.mu for r in before) / k
    out = []
    for r, s in zip(before, scores, strict=True):
        variance = 1.0 / (1.0 / r.sigma**2 + precision)
        observed = level + s - centre
        out.append(
            Rating(variance * (r.mu / r.sigma**2 + precision * observed), math.sqrt(variance))
        )
    return out


def apply_margins(
    settings: TrueSkillSettings,
    current: Mapping[int, Rating],
    bot_ids: Sequence[int],
    scores: Sequence[float],
    matches: int,
    *,
    carried: Collection[int] = (),
) -> list[RatingChange]:
    """Rate one set: bot_ids[i] scored scores[i] points a match; unknown bots start at initial.

    Bots in `carried` come from an earlier tournament: their sigma is widened by tau first.
    """
    if len(set(bot_ids)) != len(bot_ids):
        raise ResultError(f"a bot cannot be rated twice in one set: {list(bot_ids)}")
    before = [current.get(b, settings.initial()) for b in bot_ids]
    start = [
        settings.between_tournaments(r) if b in carried else r
        for b, r in zip(bot_ids, before, strict=True)
    ]
    after = rate_margins(settings, start, scores, matches)
    return [RatingChange(b, x, y) for b, x, y in zip(bot_ids, before, after, strict=True)]
