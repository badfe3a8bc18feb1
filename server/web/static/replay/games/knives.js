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
  const BANK_SIZE = 2;  // K2: two cards dealt face down to the bank; K5: the banker banks two
  /** A small pile: face up (`codes`) when the view shown holds its cards, else `count` backs. */
  function pile(ctx, cls, label, codes, count) {
    const up = codes && codes.length;
    return el("span", {
      class: `group pile ${cls} ${up ? "face-up" : "face-down"}`, "data-count": up ? codes.length : count,
    }, el("small", {}, label), up ? ctx.cards(codes) : Cards.backs(count));
  }
  /** How many cards the banker has banked, as any seat can tell: both once the bank phase is
   * over, during it one if the last move was the banker's bank (public: `bank`), else none. */
  function bankedCount(ctx) {
    const v = ctx.pub;
    if (v.phase !== "bank") return BANK_SIZE;
    const m = ctx.step.move;
    return m && m.seat === v.banker && m.action.split(":")[0] === "bank" ? 1 : 0;
  }
  /** The bank and banked cards by the seat they lie by: the banked pile by the banker, face up
   * only in a view that holds them (the banker's own, or the full table), the bank by the
   * dealer until someone picks it up, face up only to a seat that sees it. */
  function objects(ctx, s) {
    const v = ctx.pub;
    if (v.banker >= 0 && v.mode === "banker") {
      if (s !== v.banker) return [];
      const mine = ctx.known(s) ? ctx.view(s) : null;
      const count = bankedCount(ctx);
      return [
        mine && mine.bank.length ? pile(ctx, "bank", "took the bank", mine.bank, 0) : null,
        count || (mine && mine.banked.length)
          ? pile(ctx, "banked", "banked", mine ? mine.banked : null, count) : null,
      ];
    }
    if (s !== v.dealer) return [];
    const dealer = ctx.known(s) ? ctx.view(s) : null;
    const label = v.mode ? "bank, discarded" : "bank";
    return [pile(ctx, "bank", label, dealer ? dealer.bank : null, BANK_SIZE)];
  }
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
    objects,
    hand: (ctx, s) => (ctx.known(s) ? ctx.hand(ctx.view(s).hand) : el("span", { class: "muted" }, "hidden")),
    // The Joker and the knives are trumps, then the strong suit.
    suitOf: (code) => (code === "JO" ? "K" : code.slice(1)),
    trumps: (ctx) => ["K", LETTER[ctx.pub.strong_suit] || "K"],
    trump: (ctx) => (ctx.pub.strong_suit
      ? { suit: ctx.pub.strong_suit, letter: LETTER[ctx.pub.strong_suit] } : null),
    info: (ctx) => {
      const v = ctx.pub;
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
