"""games/cards.py: shared card helpers."""

from __future__ import annotations

import random

from games.cards import randbelow, seeded_rng, shuffle, shuffled, standard_deck


def test_shuffle_gives_the_order_random_shuffle_gives_from_the_same_generator_state() -> None:
    deck = standard_deck()
    for length in range(60):
        for seed in range(40):
            cards = [deck[i % 52] + str(i) for i in range(length)]
            ours, theirs = seeded_rng(seed, "t", length), seeded_rng(seed, "t", length)
            expected = list(cards)
            theirs.shuffle(expected)
            shuffle(cards, ours)
            assert cards == expected
            assert ours.getstate() == theirs.getstate()  # and used the same random bits


def test_shuffled_leaves_its_argument_alone() -> None:
    deck = standard_deck()
    expected = list(deck)
    random.Random(3).shuffle(expected)
    assert shuffled(deck, random.Random(3)) == expected
    assert deck == standard_deck()


def test_randbelow_draws_what_randrange_draws_from_the_same_generator_state() -> None:
    for bound in [*range(1, 70), 2**31, 2**31 + 1, 10**20]:
        ours, theirs = seeded_rng(bound, "b"), seeded_rng(bound, "b")
        for _ in range(50):
            assert randbelow(ours, bound) == theirs.randrange(bound)
        assert ours.getstate() == theirs.getstate()
