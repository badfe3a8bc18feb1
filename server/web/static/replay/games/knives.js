"use strict";
// Knives: the declaration and auction, the banker (solo or with a secret shadow), the bank,
// the strong suit, the trick in play, tricks and stars won.
(() => {
  const { el } = Cards;
  const LETTER = { spades: "S", clubs: "C", diamonds: "D", hearts: "H", knives: "K" };
  const seats = (ctx) => ctx.data.seats.map((_, s) => s);
  /** The first value any shown seat's view knows (full table: whoever holds it). */
  function known(ctx, pick, none) {
    for (const s of seats(ctx)) {
      const view = ctx.view(s);
      if (view && pick(view) !== none) return pick(view);
    }
    return none;
  }
  const suit = (name) => (LETTER[name] ? Cards.glyph(Cards.decks.knives, LETTER[name]) : "–");
  const trickPlays = (ctx, t) => t.cards.map((card, i) => ({ seat: ctx.seatOf(t.leader, i), card }));
  const closed = (ctx, tricks) => {
    const last = tricks[tricks.length - 1];
    return last ? { plays: trickPlays(ctx, last), winner: last.winner } : null;
  };
  Replay.register("knives", {
    deck: Cards.decks.knives,
    verbs: {
      suit: (a) => ["declares ", suit(a)],
      pick: "picks",
      pass: (a) => (a ? ["passes, naming ", suit(a)] : "passes"),
      bank: "banks", solo: "goes solo", no_solo: "does not go solo",
      leaster: "calls leaster", moster: "calls moster", reveal: "reveals",
      done: "is done revealing", play: "plays",
    },
    columns: ["tricks", "stars", "role"],
    cells: (ctx, s) => {
      const v = ctx.pub;
      const shadow = known(ctx, (w) => w.shadow, -1);
      const role = s === v.banker ? (v.solo_announced ? "banker (solo)" : "banker")
        : s === shadow ? "shadow" : s === v.dealer ? "dealer" : "";
      return [v.tricks_won[s], v.stars_won[s], role];
    },
    hand: (ctx, s) => (ctx.known(s) ? ctx.hand(ctx.view(s).hand) : el("span", { class: "muted" }, "hidden")),
    // The Joker and the knives are trumps, then the strong suit.
    suitOf: (code) => (code === "JO" ? "K" : code.slice(1)),
    trumps: (ctx) => ["K", LETTER[ctx.pub.strong_suit] || "K"],
    trump: (ctx) => (ctx.pub.strong_suit
      ? { suit: ctx.pub.strong_suit, letter: LETTER[ctx.pub.strong_suit] } : null),
    info: (ctx) => {
      const v = ctx.pub;
      const bank = known(ctx, (w) => (w.bank.length ? w.bank : null), null);
      const banked = known(ctx, (w) => (w.banked.length ? w.banked : null), null);
      return [
        ["hand", `${v.hand_number + 1}`],
        ["dealer", ctx.name(v.dealer)],
        ["phase", v.phase],
        ["declared", suit(v.declared_suit)],
        v.mode ? ["mode", v.mode] : null,
        v.led_suit ? ["led", suit(v.led_suit)] : null,
        el("span", { id: "auction", class: "chip" }, el("small", {}, "auction "), v.auction.length
          ? v.auction.map((a) => `${ctx.name(a.seat)} ${a.action}${a.suit ? ` ${a.suit}` : ""}`).join(", ")
          : "–"),
        bank ? ["bank", ctx.cards(bank)] : null,
        banked ? ["banked", ctx.cards(banked)] : null,
        v.revealed.length ? ["revealed", ctx.cards(v.revealed)] : null,
      ];
    },
    legend: () => "ranks K King, Q Queen, J Jack, M Maid, T Thief, G Ghost; † knives; ★ the Joker",
    trick: (ctx) => (ctx.pub.leader < 0 ? []
      : trickPlays(ctx, { leader: ctx.pub.leader, cards: ctx.pub.trick })),
    lastTrick: (ctx) => closed(ctx, ctx.pub.tricks),
    recordTrick: (ctx, record) => closed(ctx, record.tricks),
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
