"use strict";
// Ninja Whist: bids, the turned trump, the trick with each card's boost tokens, tokens won this
// round and banked, score tokens for exact bids.
(() => {
  const { el } = Cards;
  const LETTER = { sword: "S", staff: "T", knives: "N", stars: "R" };
  const tokens = (list) => (list.length ? list.join(" ") : "–");
  const plays = (list) => list.map((p) => ({ seat: p.seat, card: p.card,
    note: p.tokens.length ? `+${p.tokens.join("")} (${p.boost})` : "" }));
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
    columns: ["bid", "tricks", "won tokens", "banked", "exact"],
    cells: (ctx, s) => {
      const v = ctx.pub;
      return [v.bids[s] < 0 ? "–" : v.bids[s], v.tricks_won[s], tokens(v.play_areas[s].tokens),
        // Live, tokens being attached to a card are known to its player only: "?".
        v.score_areas[s].tokens ? tokens(v.score_areas[s].tokens) : "?", v.score_tokens[s]];
    },
    hand: (ctx, s) => {
      if (!ctx.known(s)) return el("span", { class: "muted" }, "hidden");
      const v = ctx.view(s);
      return el("span", {}, ctx.hand(v.hand), v.pending_card
        ? [" boosting ", ctx.card(v.pending_card), ` +${v.pending_tokens.join("")}`] : "");
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
