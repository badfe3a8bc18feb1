"use strict";
// Ninja Whist: bids, the turned trump, the trick with each card's boost tokens drawn under it,
// and by each seat its tokens as chips: won this round (its play area), banked (its score
// area, spendable), and its score tokens for exact bids.
(() => {
  const { el } = Cards;
  const LETTER = { sword: "S", staff: "T", knives: "N", stars: "R" };
  // A token's icons (W2): a Sword, b Staff, c Knives, d Stars.
  const ICON = { a: "S", b: "T", c: "N", d: "R" };
  /** One token as a chip of its icons' glyphs; the blank token has none. */
  const token = (t) => (t === "blank"
    ? el("span", { class: "token blank", "data-token": t, title: "blank token" }, "○")
    : el("span", { class: "token", "data-token": t, title: `token ${t} (${t.length} icons)` },
      [...t].map((i) => Cards.glyph(Cards.decks.ninja, ICON[i]))));
  /** A labelled group of tokens; `list` undefined (live: not known to every seat) is "?". */
  const group = (cls, label, list) => el("span", {
    class: `group tokens ${cls}`, "data-count": list ? list.length : null,
  }, el("small", {}, label), list ? (list.length ? list.map(token) : "–") : "?");
  const plays = (list) => list.map((p) => ({ seat: p.seat, card: p.card,
    note: p.tokens.length ? `+${p.boost}` : "", objects: p.tokens.map(token) }));
  const closed = (tricks) => {
    const last = tricks[tricks.length - 1];
    return last ? { plays: plays(last.plays), winner: last.winner } : null;
  };
  Replay.register("ninja-whist", {
    deck: Cards.decks.ninja,
    verbs: {
      bid: "bids", play: "plays", attach: "attaches token", done: "is done attaching",
      take: (a, ctx, words) => {
        const parts = a.split(":");
        return parts.length === 2 ? ["takes token ", parts[1], " from ", ctx.name(Number(parts[0]))]
          : ["takes token ", words(a)];
      },
    },
    columns: ["bid", "tricks"],
    cells: (ctx, s) => {
      const v = ctx.pub;
      return [v.bids[s] < 0 ? "–" : v.bids[s], v.tricks_won[s]];
    },
    objects: (ctx, s) => {
      const v = ctx.pub;
      // A seat's score area as that seat knows it (tokens it is attaching have left it).
      const own = ctx.known(s) ? ctx.view(s) : v;
      const exact = v.score_tokens[s];
      return [
        group("play-area", "won", (v.play_areas[s] || {}).tokens),
        // Live, tokens being attached to a card are known to its player only: "?".
        group("score-area", "banked", (own.score_areas[s] || {}).tokens),
        el("span", { class: "group score-tokens", "data-count": exact },
          el("small", {}, "exact bids"), exact === undefined ? "?" : exact
            ? Array.from({ length: exact }, () => el("span", {
              class: "token score-token", title: "score token: an exact bid, 10 points",
            }, "10")) : "–"),
      ];
    },
    hand: (ctx, s) => {
      if (!ctx.known(s)) return el("span", { class: "muted" }, "hidden");
      const v = ctx.view(s);
      return el("span", {}, ctx.hand(v.hand), v.pending_card
        ? el("span", { class: "pending" }, " boosting ", ctx.card(v.pending_card), " with ",
          v.pending_tokens.length ? v.pending_tokens.map(token) : "–") : "");
    },
    // The Jack of Arrows is a trump when there is one.
    suitOf: (code, ctx) => (code === "J*" ? LETTER[ctx.pub.trump] || code : code.slice(1)),
    trumps: (ctx) => [LETTER[ctx.pub.trump]],
    trump: (ctx) => ({ suit: ctx.pub.trump, letter: LETTER[ctx.pub.trump] || null }),
    info: (ctx) => {
      const v = ctx.pub;
      return [
        ["round", `${v.hand_number + 1} of ${v.rounds}, ${v.cards_dealt} cards`],
        ["dealer", ctx.name(v.dealer)],
        ["phase", v.phase],
        ["turned", v.turned ? ctx.card(v.turned) : "–"],
        ["stock", `${v.stock_size} tokens`],
        v.forbidden_bid >= 0 ? ["dealer may not bid", `${v.forbidden_bid}`] : null,
      ];
    },
    trick: (ctx) => plays(ctx.pub.trick),
    lastTrick: (ctx) => closed(ctx.pub.tricks),
    recordTrick: (ctx, record) => closed(record.tricks),
    handEnd: (ctx, record) => {
      const last = record.tricks[record.tricks.length - 1];
      return el("div", {}, `bids ${record.bids.join(" ")}, tricks ${record.tricks_won.join(" ")}, `,
        `points ${record.points.join(" ")}; last trick `,
        last ? last.plays.map((p) => ctx.card(p.card)) : "–");
    },
  });
})();
