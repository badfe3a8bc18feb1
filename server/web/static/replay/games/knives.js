"use strict";
// Knives: the declaration and auction, the banker (solo or with a secret shadow), the bank,
// the strong suit, the trick in play, tricks and stars won.
(() => {
  const { el } = Cards;
  const seats = (ctx) => ctx.data.seats.map((_, s) => s);
  /** The first value any shown seat's view knows (full table: whoever holds it). */
  function known(ctx, pick, none) {
    for (const s of seats(ctx)) {
      const view = ctx.view(s);
      if (view && pick(view) !== none) return pick(view);
    }
    return none;
  }
  const trickPlays = (ctx, t) => t.cards.map((card, i) => ({ seat: ctx.seatOf(t.leader, i), card }));
  Replay.register("knives", {
    deck: Cards.decks.knives,
    columns: ["tricks", "stars", "role"],
    cells: (ctx, s) => {
      const v = ctx.pub;
      const shadow = known(ctx, (w) => w.shadow, -1);
      const role = s === v.banker ? (v.solo_announced ? "banker (solo)" : "banker")
        : s === shadow ? "shadow" : s === v.dealer ? "dealer" : "";
      return [v.tricks_won[s], v.stars_won[s], role];
    },
    hand: (ctx, s) => (ctx.known(s) ? ctx.hand(ctx.view(s).hand) : "hidden"),
    info: (ctx) => {
      const v = ctx.pub;
      const bank = known(ctx, (w) => (w.bank.length ? w.bank : null), null);
      const banked = known(ctx, (w) => (w.banked.length ? w.banked : null), null);
      return [
        el("div", {}, `hand ${v.hand_number + 1}, dealer seat ${v.dealer}, phase ${v.phase}; `,
          `declared ${v.declared_suit || "–"}, strong suit ${v.strong_suit || "–"}`,
          v.mode ? `; mode ${v.mode}` : "", v.led_suit ? `; led ${v.led_suit}` : ""),
        el("div", { id: "auction" }, "auction: ", v.auction.length
          ? v.auction.map((a) => `seat ${a.seat} ${a.action}${a.suit ? ` ${a.suit}` : ""}`).join(", ")
          : "–"),
        bank ? el("div", {}, "bank: ", ctx.cards(bank)) : null,
        banked ? el("div", {}, "banked: ", ctx.cards(banked)) : null,
        v.revealed.length ? el("div", {}, "revealed: ", ctx.cards(v.revealed)) : null,
      ];
    },
    trick: (ctx) => (ctx.pub.leader < 0 ? []
      : trickPlays(ctx, { leader: ctx.pub.leader, cards: ctx.pub.trick })),
    lastTrick: (ctx) => {
      const done = ctx.pub.tricks;
      return done.length ? trickPlays(ctx, done[done.length - 1]) : null;
    },
    handEnd: (ctx, record) => {
      const last = record.tricks[record.tricks.length - 1];
      return el("div", {}, `mode ${record.mode}`,
        record.banker >= 0 ? `, banker seat ${record.banker}` : "",
        record.shadow >= 0 ? `, shadow seat ${record.shadow}` : "",
        `; stars ${(record.stars || []).join(" ")}; points ${record.points.join(" ")}; last trick `,
        last ? last.cards.map((c) => ctx.card(c)) : "–");
    },
  });
})();
