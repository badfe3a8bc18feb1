"use strict";
// Ninja Whist: bids, the turned trump, the trick with each card's boost tokens, tokens won this
// round and banked, score tokens for exact bids.
(() => {
  const { el } = Cards;
  const tokens = (list) => (list.length ? list.join(" ") : "–");
  const plays = (list) => list.map((p) => ({ seat: p.seat, card: p.card,
    note: p.tokens.length ? `+${p.tokens.join("")} (${p.boost})` : "" }));
  Replay.register("ninja-whist", {
    deck: Cards.decks.ninja,
    columns: ["bid", "tricks", "won tokens", "banked", "exact"],
    cells: (ctx, s) => {
      const v = ctx.pub;
      return [v.bids[s] < 0 ? "–" : v.bids[s], v.tricks_won[s], tokens(v.play_areas[s].tokens),
        tokens(v.score_areas[s].tokens), v.score_tokens[s]];
    },
    hand: (ctx, s) => {
      if (!ctx.known(s)) return "hidden";
      const v = ctx.view(s);
      return el("span", {}, ctx.hand(v.hand), v.pending_card
        ? [" boosting ", ctx.card(v.pending_card), ` +${v.pending_tokens.join("")}`] : "");
    },
    info: (ctx) => {
      const v = ctx.pub;
      return [el("div", {}, `round ${v.hand_number + 1} of ${v.rounds}, ${v.cards_dealt} cards, `,
        `dealer seat ${v.dealer}, phase ${v.phase}; turned `,
        v.turned ? ctx.card(v.turned) : "–", ` trump ${v.trump}; stock ${v.stock_size} tokens`,
        v.forbidden_bid >= 0 ? `; dealer may not bid ${v.forbidden_bid}` : "")];
    },
    trick: (ctx) => plays(ctx.pub.trick),
    lastTrick: (ctx) => {
      const done = ctx.pub.tricks;
      return done.length ? plays(done[done.length - 1].plays) : null;
    },
    handEnd: (ctx, record) => {
      const last = record.tricks[record.tricks.length - 1];
      return el("div", {}, `bids ${record.bids.join(" ")}, tricks ${record.tricks_won.join(" ")}, `,
        `points ${record.points.join(" ")}; last trick `,
        last ? last.plays.map((p) => ctx.card(p.card)) : "–");
    },
  });
})();
