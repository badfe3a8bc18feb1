"use strict";
// Kansas City: colour-suited hands (others as numbered backs when numbers are public), the
// pass, upgraded trumps, the trick in play, tricks and captured 4s.
(() => {
  const { el } = Cards;
  Replay.register("kansas-city", {
    deck: Cards.decks.kansas,
    columns: ["tricks", "4s", "passed to"],
    cells: (ctx, s) => {
      const pass = ctx.pub.passes.find((p) => p.seat === s);
      return [ctx.pub.tricks_won[s], ctx.pub.fours[s], pass ? `seat ${pass.to_seat}` : ""];
    },
    hand: (ctx, s) => {
      if (ctx.known(s)) {
        const v = ctx.view(s);
        return el("span", {}, ctx.hand(v.hand),
          v.trumps.length ? [" trumps ", ctx.cards(v.trumps)] : "",
          v.passed.length ? [" passed ", ctx.cards(v.passed)] : "",
          v.received.length ? [" received ", ctx.cards(v.received)] : "");
      }
      const p = ctx.pub.players[s];
      const plain = p.hand_size - p.trump_numbers.length;
      return el("span", {}, Cards.backs(plain, p.numbers.length ? p.numbers : null),
        p.trump_numbers.length ? [" trumps ", ctx.cards(p.trump_numbers.map((n) => `T${n}`))] : "");
    },
    info: (ctx) => {
      const v = ctx.pub;
      return [
        el("div", {}, `hand ${v.hand_number + 1} of ${v.hands_in_match}, dealer seat ${v.dealer}, `,
          `phase ${v.phase}`, v.led ? `; led ${v.led}` : "",
          v.held_trumps.length ? `; trumps held ${v.held_trumps.join(" ")}` : ""),
        v.missing ? el("div", {}, "set aside: ", ctx.card(v.missing)) : null,
        v.passes.length ? el("div", { id: "passes" }, "passes: ", v.passes.map((p) =>
          `seat ${p.seat} → ${p.to_seat}${p.numbers.length ? ` (${p.numbers.join(" ")})` : ""}`)
          .join(", ")) : null,
      ];
    },
    trick: (ctx) => ctx.pub.trick,
    lastTrick: (ctx) => {
      const done = ctx.pub.tricks;
      if (!done.length) return null;
      const last = done[done.length - 1];
      return last.plays.map((p) => ({ ...p,
        note: last.upgrades.filter((u) => u.seat === p.seat).map((u) => `↑${u.number}`).join("") }));
    },
    handEnd: (ctx, record) => {
      const last = record.tricks[record.tricks.length - 1];
      return el("div", {}, `tricks ${record.tricks_won.join(" ")}, 4s ${record.fours.join(" ")}, `,
        `points ${record.points.join(" ")}; last trick `,
        last ? last.plays.map((p) => ctx.card(p.card)) : "–");
    },
  });
})();
