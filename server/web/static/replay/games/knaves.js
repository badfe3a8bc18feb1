"use strict";
// Knaves: the turned-up trump, the trick in play, tricks won and Jack penalties per seat.
(() => {
  const { el } = Cards;
  const trickPlays = (ctx, t) => t.cards.map((card, i) => ({ seat: ctx.seatOf(t.leader, i), card }));
  Replay.register("knaves", {
    deck: Cards.decks.standard,
    columns: ["tricks", "penalty"],
    cells: (ctx, s) => [ctx.pub.tricks_won[s], ctx.pub.penalties[s]],
    hand: (ctx, s) => (ctx.known(s) ? ctx.hand(ctx.view(s).hand) : "hidden"),
    info: (ctx) => [
      el("span", {}, `hand ${ctx.pub.hand_number + 1}, dealer seat ${ctx.pub.dealer}; turned `),
      ctx.card(ctx.pub.turned), el("span", {}, ` trump ${ctx.pub.trump}`),
    ],
    trick: (ctx) => trickPlays(ctx, { leader: ctx.pub.leader, cards: ctx.pub.trick }),
    lastTrick: (ctx) => {
      const done = ctx.pub.tricks;
      return done.length ? trickPlays(ctx, done[done.length - 1]) : null;
    },
    handEnd: (ctx, record) => {
      const last = record.tricks[record.tricks.length - 1];
      return el("div", {}, `tricks ${record.tricks_won.join(" ")}, penalties `,
        `${record.penalties.join(" ")}, points ${record.points.join(" ")}; last trick `,
        last ? last.cards.map((c) => ctx.card(c)) : "–");
    },
  });
})();
