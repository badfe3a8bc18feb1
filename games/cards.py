"""Card helpers shared by games that use the standard 52-card pack."""

from __future__ import annotations

import random
from typing import TypeVar

T = TypeVar("T")

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


def randbelow(rng: random.Random, bound: int) -> int:
    """rng.randrange(bound) for a bound > 0, the same number from the same random bits, with
    the draw compiled (Random._randbelow's: getrandbits of the bound's bit length until
    below the bound)."""
    width = bound.bit_length()
    j = rng.getrandbits(width)
    while j >= bound:
        j = rng.getrandbits(width)
    return j


def shuffle(cards: list[T], rng: random.Random) -> None:
    """Shuffle in place into the very order rng.shuffle(cards) gives from the same generator
    state, with the loop compiled: random.Random.shuffle is Python code that makes two calls
    per card. The same Fisher-Yates walk; each index drawn as Random._randbelow draws it, from
    getrandbits(bit length of the bound) until below the bound."""
    getrandbits = rng.getrandbits
    for i in range(len(cards) - 1, 0, -1):
        bound = i + 1
        width = bound.bit_length()
        j = getrandbits(width)
        while j >= bound:
            j = getrandbits(width)
        cards[i], cards[j] = cards[j], cards[i]


def shuffled(cards: list[str], rng: random.Random) -> list[str]:
    """A shuffled copy of the cards."""
    out = list(cards)
    shuffle(out, rng)
    return out
