"use strict";
// Kansas City: colour-suited hands (others as numbered backs when numbers are public), the
// pass, upgraded trumps, the trick in play, tricks and captured 4s; a legend of the colours.
(() => {
  const { el } = Cards;
  const deck = Cards.decks.kansas;
  const letterOf = (name) => Object.keys(deck.suits).find((k) => deck.suits[k][2] === name);
  const plays = (trick) => trick.plays.map((p) => ({ ...p,
    note: (trick.upgrades || []).filter((u) => u.seat === p.seat).map((u) => `↑${u.number}`).join("") }));
  const closed = (tricks) => {
    const last = tricks[tricks.length - 1];
    return last ? { plays: plays(last), winner: last.winner } : null;
  };
  Replay.register("kansas-city", {
    deck,
    verbs: { pass: "passes", play: "plays", upgrade: "upgrades", none: "does not upgrade" },
    columns: ["tricks", "4s", "passed to"],
    cells: (ctx, s) => {
      const pass = ctx.pub.passes.find((p) => p.seat === s);
      return [ctx.pub.tricks_won[s], ctx.pub.fours[s], pass ? ctx.name(pass.to_seat) : ""];
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
      // Live, while the pass is under way, some seats know more of a hand than others.
      if (p.hand_size === undefined || !p.numbers) return el("span", { class: "muted" }, "hidden");
      const plain = p.hand_size - p.trump_numbers.length;
      return el("span", {}, Cards.backs(plain, p.numbers.length ? p.numbers : null),
        p.trump_numbers.length ? [" trumps ", ctx.cards(p.trump_numbers.map((n) => `T${n}`))] : "");
    },
    // Trumps (upgraded cards) are held apart from the hand: a hand is colours only ("?" a
    // card whose face is never shown).
    suitOf: (code) => code.slice(1),
    trumps: () => [],
    info: (ctx) => {
      const v = ctx.pub;
      return [
        ["hand", `${v.hand_number + 1} of ${v.hands_in_match}`],
        ["dealer", ctx.name(v.dealer)],
        ["phase", v.phase],
        v.led ? ["led", v.led === "trump" ? "trump ▲" : Cards.glyph(deck, letterOf(v.led))] : null,
        v.held_trumps.length ? ["trumps held", ctx.cards(v.held_trumps.map((n) => `T${n}`))] : null,
        v.missing ? ["set aside", ctx.card(v.missing)] : null,
        v.passes.length ? el("span", { id: "passes", class: "chip" }, el("small", {}, "passes "),
          v.passes.map((p) => `${ctx.name(p.seat)} → ${ctx.name(p.to_seat)}`
            + `${p.numbers.length ? ` (${p.numbers.join(" ")})` : ""}`).join(", ")) : null,
      ];
    },
    legend: () => ["colours: ",
      Object.keys(deck.suits).map((k) => el("span", { class: "key" }, Cards.glyph(deck, k), ` ${deck.suits[k][2]}`)),
      "; ", el("span", { class: "card trump" }, "5▲"), " an upgraded card (trump) with its number; ",
      el("span", { class: "card back" }, "5"), " a card whose face is never shown"],
    trick: (ctx) => ctx.pub.trick,
    lastTrick: (ctx) => closed(ctx.pub.tricks),
    recordTrick: (ctx, record) => closed(record.tricks),
    handEnd: (ctx, record) => {
      const last = record.tricks[record.tricks.length - 1];
      return el("div", {}, `tricks ${record.tricks_won.join(" ")}, 4s ${record.fours.join(" ")}, `,
        `points ${record.points.join(" ")}; last trick `,
        last ? last.plays.map((p) => ctx.card(p.card)) : "–");
    },
  });
})();
