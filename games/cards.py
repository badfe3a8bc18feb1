"""Card helpers shared by games that use the standard 52-card pack."""

from __future__ import annotations

import random

RANKS = "23456789TJQKA"
SUITS = "SHDC"
SUIT_NAMES = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs"}


def standard_deck() -> list[str]:
    """The 52 cards as two-character codes, rank then suit (``TH`` is the ten of hearts)."""
    return [r + s for s in SUITS for r in RANKS]


def rank_value(card: str) -> int:
    """Rank of a standard card: 2 for a deuce up to 14 for an ace."""
    return RANKS.index(card[0]) + 2


def seeded_rng(seed: int, *labels: object) -> random.Random:
    """A random generator determined only by the seed and the labels (e.g. the hand number)."""
    key = ":".join(["cardshark", str(seed), *(str(label) for label in labels)])
    return random.Random(key)


def shuffled(cards: list[str], rng: random.Random) -> list[str]:
    """A shuffled copy of the cards."""
    out = list(cards)
    rng.shuffle(out)
    return out
