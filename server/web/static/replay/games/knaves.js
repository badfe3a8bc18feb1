"use strict";
// Knaves: the turned-up trump, the trick in play, tricks won and Jack penalties per seat.
(() => {
  const { el } = Cards;
  const trickPlays = (ctx, t) => t.cards.map((card, i) => ({ seat: ctx.seatOf(t.leader, i), card }));
  const closed = (ctx, tricks) => {
    const last = tricks[tricks.length - 1];
    return last ? { plays: trickPlays(ctx, last), winner: last.winner } : null;
  };
  Replay.register("knaves", {
    deck: Cards.decks.standard,
    verbs: { play: "plays" },
    columns: ["tricks", "penalty"],
    cells: (ctx, s) => [ctx.pub.tricks_won[s], ctx.pub.penalties[s]],
    hand: (ctx, s) => (ctx.known(s) ? ctx.hand(ctx.view(s).hand) : el("span", { class: "muted" }, "hidden")),
    suitOf: (code) => code.slice(1),
    trumps: (ctx) => [ctx.pub.trump],
    trump: (ctx) => ({ suit: ctx.pub.trump, letter: ctx.pub.trump }),
    info: (ctx) => [
      ["hand", `${ctx.pub.hand_number + 1}`],
      ["dealer", ctx.name(ctx.pub.dealer)],
      ["turned", ctx.card(ctx.pub.turned)],
    ],
    trick: (ctx) => trickPlays(ctx, { leader: ctx.pub.leader, cards: ctx.pub.trick }),
    lastTrick: (ctx) => closed(ctx, ctx.pub.tricks),
    recordTrick: (ctx, record) => closed(ctx, record.tricks),
    handEnd: (ctx, record) => {
      const last = record.tricks[record.tricks.length - 1];
      return el("div", {}, `tricks ${record.tricks_won.join(" ")}, penalties `,
        `${record.penalties.join(" ")}, points ${record.points.join(" ")}; last trick `,
        last ? last.cards.map((c) => ctx.card(c)) : "–");
    },
  });
})();
