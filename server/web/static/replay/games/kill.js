"use strict";
// Kill: hands (face down to others), the drawn card, who is still in, and the round's events.
(() => {
  const { el } = Cards;
  const SHOWN_EVENTS = 8;
  function event(ctx, e) {
    return el("li", {}, `${e.kind}${e.seat >= 0 ? ` by ${ctx.name(e.seat)}` : ""}`,
      e.target >= 0 ? ` → ${ctx.name(e.target)}` : "",
      e.card ? [" ", ctx.card(e.card)] : "",
      e.cards && e.cards.length ? [" ", ctx.cards(e.cards)] : "",
      e.secret ? [" secret ", ctx.card(e.secret)] : "",
      e.points ? ` (${e.points > 0 ? "+" : ""}${e.points})` : "",
      e.kind === "kill" || e.kind === "claim_joker" ? (e.success ? " success" : " failed") : "",
      e.count ? ` ${e.count}` : "");
  }
  /** The full table knows every secret: the event as the seat that knew its secret saw it. */
  function withSecret(ctx, e, index) {
    if (!ctx.full || e.secret) return e;
    for (const [s] of ctx.data.seats.entries()) {
      const seen = ctx.view(s).events[index];
      if (seen && seen.secret) return seen;
    }
    return e;
  }
  const DECLARED = {
    show_win: "shows a win", show_trio: "shows a trio", claim_win: "claims a win",
    claim_trio: "claims a trio",
  };
  const signed = (points) => (points ? ` (${points > 0 ? "+" : ""}${points})` : "");
  /** The round's events whose markers are drawn: at a round's end those of the round just
   * ended (its record, which every seat is sent: a kill or a win ends it), else the round's. */
  const markedEvents = (ctx) => (ctx.step.hand_ended ? ctx.step.hand_ended.record.events : ctx.pub.events);
  /** The markers of the round's events on the seat they concern: a kill or a Joker claim on
   * its target, naming who made it; a declaration on its maker. Only public fields are read
   * (kind, seats, points, success): every seat's view holds them alike. */
  function markers(ctx, s) {
    return markedEvents(ctx).map((e) => {
      const by = ctx.name(e.seat);
      const attrs = (text) => el("span", {
        class: `marker ${e.kind}${e.success ? "" : " failed"}`, "data-kind": e.kind,
        "data-by": e.seat, "data-success": e.success ? "1" : "0",
        title: `${e.kind} by ${by}`,
      }, text);
      if (e.kind === "kill" && e.target === s) {
        return attrs(e.success ? `✖ killed by ${by}${signed(e.points)}`
          : `✖ kill by ${by} failed${signed(e.points)}`);
      }
      if (e.kind === "claim_joker" && e.target === s) {
        return attrs(e.success ? `★ Joker claimed by ${by}` : `★ ${by} claimed a Joker: none`);
      }
      if (DECLARED[e.kind] && e.seat === s) return attrs(`${DECLARED[e.kind]}${signed(e.points)}`);
      return null;
    });
  }
  Replay.register("kill", {
    deck: Cards.decks.kill,
    handWord: "round",
    verbs: {
      draw: "draws", show_win: "shows a winning hand", show_trio: "shows a trio", fold: "folds",
      kill: (a, ctx) => ["kills ", ctx.name(Number(a))],
      claim_joker: (a, ctx) => ["claims the Joker from ", ctx.name(Number(a))],
      decline: "declines", swap: "swaps", discard: "discards",
      two: (a, ctx, words) => ["gives two ", words(a)],
      claim_win: "claims a win", claim_trio: "claims a trio", continue: "continues",
    },
    group: (ctx) => `${ctx.name(ctx.pub.turn)}'s turn`,
    columns: ["", "cards", "round"],
    cells: (ctx, s) => [ctx.pub.active[s] ? "in" : "out", ctx.pub.hand_sizes[s],
      ctx.pub.round_points[s]],
    objects: (ctx, s) => [
      ctx.pub.immune[s] ? el("span", { class: "marker immune", title: "immune to kills" }, "immune")
        : null,
      markers(ctx, s),
    ],
    hand: (ctx, s) => {
      const out = ctx.pub.out[s].cards;
      const aside = out.length ? [" set aside ", ctx.cards(out)] : "";
      if (!ctx.known(s)) return el("span", {}, Cards.backs(ctx.pub.hand_sizes[s]), aside);
      const view = ctx.view(s);
      return el("span", {}, ctx.hand(view.hand), view.drawn && s === ctx.pub.turn ? [" drew ", ctx.card(view.drawn)] : "",
        aside);
    },
    suitOf: (code) => (code === "JK" ? code : code.slice(1)),
    trumps: () => ["JK"],
    info: (ctx) => {
      const v = ctx.pub;
      return [
        ["round", `${v.hand_number + 1}`],
        ["started by", ctx.name(v.starter)],
        ["turn of", ctx.name(v.turn)],
        ["phase", `${v.phase}${v.draw_only ? " (draw only)" : ""}`],
        ["turns", `${v.turns}`],
        ["deck", `${v.deck_size}`],
        ["used pile", `${v.used_size}`],
      ];
    },
    /** The middle of the table: the round's latest events (draws, claims, kills). */
    middle: (ctx) => {
      const v = ctx.pub;
      const events = v.events.slice(-SHOWN_EVENTS);
      return el("ol", { id: "events", start: v.events.length - events.length + 1 },
        events.map((e, i) => event(ctx, withSecret(ctx, e, v.events.length - events.length + i))));
    },
    handEnd: (ctx, record) => el("div", {},
      `ended by ${record.end}${record.winner >= 0 ? `, winner seat ${record.winner}` : ""}; `,
      `points ${record.points.join(" ")}`),
  });
})();
