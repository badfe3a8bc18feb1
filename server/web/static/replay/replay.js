"use strict";
// The replay viewer: loads one match's JSON (computed by the server through the game engine),
// steps through it and draws each step with the game's renderer. Bot-supplied strings only
// ever reach the page as text nodes. A match in play draws its public table the same way
// (`live`, from match_live.js): no seat's view, only what every seat's view agrees on.
const Replay = (() => {
  const { el } = Cards;
  const renderers = {};
  const root = document.getElementById("replay");  // null on a live page
  const matchId = root ? root.dataset.match : null;
  let data = null;
  let at = 0;
  let focus = "";

  /** A game's renderer: deck, columns, cells(ctx, s), hand(ctx, s), info(ctx) (the public
   * strip's items), suitOf(code, ctx) and trumps(ctx) (hands are drawn grouped by suit, trump
   * first), and optionally trump(ctx) ({suit, letter} for the strip), trick(ctx) (the plays
   * of the trick in play), lastTrick(ctx) and recordTrick(ctx, record) (the trick closed last, as
   * {plays, winner}; a play may carry `objects`, nodes drawn under its card), handEnd(ctx,
   * record), legend(), middle(ctx) (the middle of a table without tricks) and objects(ctx, s)
   * (the game's objects by seat s: tokens, markers, piles; only what the view shown holds). */
  function register(game, renderer) {
    renderers[game] = renderer;
  }

  /** Where each seat sits around the table, counted from the seat at the bottom in turn order
   * (bridge's South, West, North, East). */
  const PLACES = {
    2: ["b", "t"], 3: ["b", "tl", "tr"], 4: ["b", "l", "t", "r"], 5: ["b", "l", "tl", "tr", "r"],
  };

  function placeOf(s) {
    const n = data.seats.length;
    const bottom = data.focus === null ? 0 : data.focus;
    const places = PLACES[n] || PLACES[4];
    return places[(s - bottom + n) % n] || "b";
  }

  function readHash() {
    const params = new URLSearchParams(location.hash.slice(1));
    return { step: parseInt(params.get("step") || "0", 10) || 0, seat: params.get("seat") || "" };
  }

  function writeHash() {
    const params = new URLSearchParams();
    params.set("step", String(at));
    if (focus !== "") params.set("seat", focus);
    history.replaceState(null, "", `#${params}`);
  }

  async function load(seat) {
    const query = seat === "" ? "" : `?seat=${encodeURIComponent(seat)}`;
    const response = await fetch(`/api/matches/${matchId}/replay${query}`);
    if (!response.ok) throw new Error(`replay: HTTP ${response.status}`);
    data = await response.json();
    focus = seat;
    const slider = document.getElementById("slider");
    slider.max = String(data.steps.length - 1);
    document.getElementById("total").textContent = String(data.steps.length - 1);
    root.dataset.loaded = focus === "" ? "full" : `seat-${focus}`;
  }

  /** What a renderer is given for one step. The public table of a match in play (data.live)
   * knows no seat: every hand is drawn hidden, every renderer reads `pub`. */
  function context(step) {
    const full = data.focus === null && !data.live;
    const view = (s) => {
      if (full) return { ...step.shared, ...(step.own[s] || {}) };
      return s === data.focus ? step.shared : null;
    };
    const renderer = renderers[data.game];
    const ctxOf = {
      step, data, full, focus: data.focus, view,
      pub: full ? view(0) : step.shared,
      known: (s) => full || s === data.focus,
      name: (s) => (data.seats[s] ? data.seats[s].bot : "–"),
      card: (code) => Cards.card(renderer.deck, code),
      cards: (codes) => Cards.cards(renderer.deck, codes),
      hand: (codes) => Cards.cards(renderer.deck,
        Cards.bySuit(codes || [], (c) => renderer.suitOf(c, ctxOf), renderer.trumps(ctxOf)), "hand-cards"),
      seatOf: (leader, i) => (leader + i) % data.seats.length,
    };
    return ctxOf;
  }

  function seatLabel(s) {
    return s === null || s === undefined || s < 0 ? "–" : `seat ${s} ${data.seats[s].bot}`;
  }

  /** A trick in the middle of the table: each card at its player's side with the bot's name;
   * `winner` (a closed trick) marks the card that took it. */
  function plays(ctx, list, id, winner, cls) {
    return el("div", { id, class: `plays ${cls || ""}` }, (list || []).map((p) => {
      const won = winner !== undefined && winner === p.seat;
      return el("span", { class: `play at-${placeOf(p.seat)}${won ? " winner" : ""}`, "data-seat": p.seat },
        el("span", { class: "who" }, ctx.name(p.seat)), ctx.card(p.card),
        p.note ? el("small", { class: "note" }, p.note) : null,
        p.objects && p.objects.length ? el("span", { class: "objects" }, p.objects) : null,
        won ? el("span", { class: "won", title: "won the trick" }, " ✔ won") : null);
    }));
  }

  /** The middle of the table: the trick in play, or once it closes (until the next lead, or
   * at a hand's end from its published record) the closed trick with its winner. */
  function centre(ctx, renderer) {
    if (!renderer.trick) return renderer.middle ? renderer.middle(ctx) : null;
    const trick = renderer.trick(ctx) || [];
    if (trick.length) return plays(ctx, trick, "trick");
    const ended = ctx.step.hand_ended;
    if (ended && renderer.recordTrick) {
      const closed = renderer.recordTrick(ctx, ended.record);
      if (closed) {
        return el("div", {}, plays(ctx, [], "trick"),
          plays(ctx, closed.plays, "last-trick", closed.winner, "from-record"));
      }
    }
    const closed = renderer.lastTrick ? renderer.lastTrick(ctx) : null;
    if (closed) return el("div", {}, plays(ctx, [], "trick"), plays(ctx, closed.plays, "last-trick", closed.winner));
    return plays(ctx, [], "trick");
  }

  function seatPanel(ctx, renderer, s) {
    const step = ctx.step;
    const seat = data.seats[s];
    const faulted = step.faults.some((f) => f.seat === s);
    const classes = ["seat", `at-${placeOf(s)}`];
    if (step.to_act === s) classes.push("to-act");
    if (step.move && step.move.seat === s) classes.push("moved");
    if (faulted) classes.push("faulted");
    if (seat.forfeited) classes.push("forfeited");
    const cells = renderer.cells(ctx, s);
    return el("div", { class: classes.join(" "), "data-seat": s },
      el("div", { class: "head" },
        el("span", { class: "turn", title: "to act" }, step.to_act === s ? "▶ " : ""),
        el("span", { class: "bot" }, seat.bot),
        el("small", { class: "seat-no" }, ` seat ${s}`),
        faulted ? el("span", { class: "fault" }, " ⚠ fault") : null,
        seat.forfeited ? el("span", { class: "fault" }, " (forfeited)") : null,
        el("span", { class: "score", title: "score" }, String(step.scores[s]))),
      el("div", { class: "stats" }, renderer.columns.map((c, i) =>
        (cells[i] === "" || cells[i] === null || cells[i] === undefined ? null
          : el("span", { class: "stat" }, el("small", {}, `${c} `), cells[i])))),
      renderer.objects ? el("div", { class: "objects" }, renderer.objects(ctx, s)) : null,
      el("div", { class: "hand" }, renderer.hand(ctx, s)));
  }

  /** The table: seats around it, the trick in the middle. */
  function tableOf(ctx, renderer) {
    return el("div", { id: "seats", class: `felt seats-${data.seats.length}` },
      data.seats.map((_, s) => seatPanel(ctx, renderer, s)),
      el("div", { id: "centre" }, centre(ctx, renderer)));
  }

  /** The public state in one strip: the trump as its glyph first, then the game's items. */
  function strip(ctx, renderer) {
    const trump = renderer.trump ? renderer.trump(ctx) : null;
    return el("div", { id: "info" },
      trump ? el("span", { id: "trump", class: "chip", "data-suit": trump.suit },
        el("small", {}, "trump "), trump.letter ? Cards.glyph(renderer.deck, trump.letter) : "none")
        : null,
      // An item the table leaves out (live: something not every seat knows) is not shown.
      renderer.info(ctx).filter((item) => item && !(Array.isArray(item) && item[1] === undefined))
        .map((item) => (Array.isArray(item)
        ? el("span", { class: "chip" }, el("small", {}, `${item[0]} `), item[1])
        : item)));
  }

  /** An argument of an action in words: cards drawn as cards, `p2` as seat 2's bot. */
  function tokens(ctx, text) {
    const deck = renderers[data.game].deck;
    return text.split(/([+>:, ])/).filter((t) => t !== "").map((t) => {
      if (Cards.isCard(deck, t)) return ctx.card(t);
      if (/^p\d+$/.test(t) && data.seats[Number(t.slice(1))]) return ctx.name(Number(t.slice(1)));
      return t;
    });
  }

  /** A move in words: "p0 plays 8♥", "rand1 bids 3" (without its player when `who` is false).
   * A renderer's `verbs` map an action's kind to its verb, or to a function of its argument;
   * a public label's "; shows …" is written after a dash. */
  function words(ctx, seat, action, who = true) {
    const [head, ...shows] = action.split("; ");
    const colon = head.indexOf(":");
    const kind = colon < 0 ? head : head.slice(0, colon);
    const arg = colon < 0 ? "" : head.slice(colon + 1);
    const verb = (renderers[data.game].verbs || {})[kind];
    let said;
    if (typeof verb === "function") said = verb(arg, ctx, (t) => tokens(ctx, t));
    else said = [verb || kind, arg ? [" ", tokens(ctx, arg)] : ""];
    return el("span", { class: "words", "data-action": action },
      who ? [el("span", { class: "actor" }, ctx.name(seat)), " "] : "", said,
      shows.length ? [" — ", tokens(ctx, shows.join("; "))] : "");
  }

  function moveLine(ctx) {
    const step = ctx.step;
    const box = document.getElementById("move");
    box.replaceChildren();
    // The move that ends a hand may name a card of it: one of the hand record every seat is sent.
    box.classList.toggle("from-record", Boolean(step.hand_ended));
    if (step.move) {
      const m = step.move;
      box.append(el("b", { id: "action", "data-action": m.action }, words(ctx, m.seat, m.action)),
        m.ms === null ? "" : ` in ${m.ms.toFixed(1)} ms`,
        m.legal ? el("span", { id: "legal" }, "; could have: ",
          m.legal.map((a, i) => [i ? ", " : "", words(ctx, m.seat, a, false)])) : "");
    } else {
      box.append(el("b", { id: "action", "data-action": "" }, "–"), " (the deal)");
    }
    box.append(el("div", {}, "to act: ", el("span", { id: "to-act" }, seatLabel(step.to_act))));
  }

  /** A fault in words: its kind, the seat charged, the detail, and the move played for it. */
  function faultWords(ctx, f) {
    return [`${f.kind} of ${seatLabel(f.seat)}: ${f.detail}`,
      f.fallback ? [" (fallback: ", words(ctx, f.seat, f.fallback, false), ")"] : ""];
  }

  function faultLines(ctx) {
    document.getElementById("faults").replaceChildren(...ctx.step.faults.map((f) =>
      el("div", { class: "fault", "data-seat": f.seat }, "fault ", faultWords(ctx, f))));
  }

  /** Which group of the step list the move after `ctx`'s step belongs to: the trick it plays
   * to, else the phase (bids, the pass, the auction) or the renderer's own grouping. */
  function groupOf(ctx) {
    const renderer = renderers[data.game];
    if (renderer.group) return renderer.group(ctx);
    const v = ctx.pub;
    if (Array.isArray(v.tricks) && (v.phase === undefined || v.phase === "play")) {
      return `trick ${v.tricks.length + 1}`;
    }
    return v.phase || "";
  }

  /** Every step in words, grouped by hand and then by trick (or phase). A seat's view lists
   * only the moves it has seen: later ones are links without their actions. */
  function moveList() {
    const list = document.getElementById("moves");
    const renderer = renderers[data.game];
    const hands = [];
    let group = null;
    for (const s of data.steps.slice(1)) {
      const before = context(data.steps[s.n - 1]);
      const hand = before.pub.hand_number + 1;
      if (!hands.length || hands[hands.length - 1].hand !== hand) {
        hands.push({ hand, groups: [] });
        group = null;
      }
      const label = groupOf(before);
      if (!group || group.label !== label) {
        group = { label, items: [] };
        hands[hands.length - 1].groups.push(group);
      }
      const seen = data.focus === null || s.n <= at;
      const ctx = seen ? context(s) : null;
      group.items.push(el("li", { id: `s${s.n}` },
        el("a", { href: `#step=${s.n}${focus === "" ? "" : `&seat=${focus}`}` }, String(s.n)),
        seen ? [" ", words(ctx, s.move.seat, s.move.action)] : "",
        seen ? s.faults.map((f) => el("span", { class: "fault" }, " ⚠ ", faultWords(ctx, f))) : "",
        seen && s.hand_ended ? el("b", {}, ` · ${renderer.handWord || "hand"} ${s.hand_ended.number + 1} ended`) : null));
    }
    list.replaceChildren(...hands.map((h) =>
      el("section", { class: "hand-steps", "data-hand": h.hand },
        el("h3", {}, `${renderer.handWord || "hand"} ${h.hand}`),
        h.groups.map((g) => el("div", { class: "group", "data-group": g.label },
          el("span", { class: "label" }, g.label), el("ol", {}, g.items))))));
  }

  const number = (v) => (v === null || v === undefined ? "–" : String(v));

  /** The end of a match: who won and by how much, every seat's score, rank, faults and
   * forfeit, and the points of every hand (from the hand records every seat is sent). */
  function summary(ctx) {
    const box = document.getElementById("summary");
    box.replaceChildren();
    if (at !== data.steps.length - 1 || ctx.step.to_act !== null) return;
    const renderer = renderers[data.game];
    const seats = data.seats;
    const byRank = seats.map((_, s) => s).sort((a, b) =>
      (seats[a].rank ?? Infinity) - (seats[b].rank ?? Infinity) || a - b);
    const first = byRank.filter((s) => seats[s].rank === 1);
    const next = byRank.find((s) => seats[s].rank !== 1);
    let headline = `${data.status}`;
    if (first.length) {
      const names = first.map((s) => seats[s].bot).join(" and ");
      const top = seats[first[0]].score;
      headline = first.length > 1 ? `${names} shared first place with ${number(top)}`
        : `${names} won with ${number(top)}`;
      if (next !== undefined && top !== null && seats[next].score !== null) {
        headline += `, ${number(top - seats[next].score)} ahead of ${seats[next].bot}`;
      }
    }
    const faultsOf = (s) => {
      const kinds = Object.entries(seats[s].faults || {});
      const total = kinds.reduce((sum, [, count]) => sum + count, 0);
      return total ? `${total} (${kinds.map(([k, c]) => (c > 1 ? `${k} ×${c}` : k)).join(", ")})` : "0";
    };
    const forfeits = byRank.filter((s) => seats[s].forfeited);
    const hands = data.steps.filter((s) => s.hand_ended).map((s) => s.hand_ended);
    const word = renderer.handWord || "hand";
    box.append(el("h2", {}, "Match over"),
      el("p", { id: "headline" }, headline,
        forfeits.length ? `; ${forfeits.map((s) => seats[s].bot).join(", ")} forfeited` : ""),
      el("table", { id: "standings" },
        el("tr", {}, el("th", { class: "num" }, "rank"), el("th", {}, "bot"),
          el("th", { class: "num" }, "score"), el("th", {}, "faults"), el("th", {}, "")),
        byRank.map((s) => el("tr", { "data-seat": s },
          el("td", { class: "num rank" }, number(seats[s].rank)),
          el("td", { class: "bot" }, seats[s].bot),
          el("td", { class: "num score" }, number(seats[s].score)),
          el("td", { class: "faults" }, faultsOf(s)),
          el("td", { class: "forfeit" }, seats[s].forfeited ? "forfeited" : "")))),
      hands.length ? el("table", { id: "hand-points" },
        el("tr", {}, el("th", {}, word), seats.map((seat) => el("th", { class: "num" }, seat.bot))),
        hands.map((h) => el("tr", { "data-hand": h.number + 1 },
          el("td", {}, `${word} ${h.number + 1}`),
          seats.map((_, s) => el("td", { class: "num" }, number((h.record.points || [])[s]))))),
        el("tr", { class: "total" }, el("th", {}, "total"),
          seats.map((seat) => el("th", { class: "num" }, number(seat.score))))) : null);
  }

  function show(n) {
    if (!data) return;
    at = Math.max(0, Math.min(data.steps.length - 1, n));
    const step = data.steps[at];
    const renderer = renderers[data.game];
    const ctx = context(step);
    document.getElementById("step").textContent = String(at);
    document.getElementById("slider").value = String(at);
    summary(ctx);
    moveLine(ctx);
    faultLines(ctx);
    const table = document.getElementById("table");
    table.replaceChildren(...[
      strip(ctx, renderer),
      tableOf(ctx, renderer),
      renderer.legend ? el("div", { id: "legend" }, renderer.legend()) : null,
      ctx.full && step.unseen && step.unseen.length
        ? el("div", { id: "unseen" }, "face down (no seat sees them): ", ctx.cards(step.unseen))
        : null,
    ].filter(Boolean));
    const ended = document.getElementById("last-hand");
    ended.replaceChildren();
    if (step.hand_ended) {
      ended.append(el("b", {}, `hand ${step.hand_ended.number + 1} ended`),
        renderer.handEnd(ctx, step.hand_ended.record));
    }
    moveList();
    document.querySelectorAll("#moves li.current").forEach((li) => li.classList.remove("current"));
    const row = document.getElementById(`s${at}`);
    if (row) row.classList.add("current");
    writeHash();
    root.dataset.step = String(at);
  }

  async function switchSeat(seat) {
    await load(seat);
    show(at);
  }

  async function start() {
    const wanted = readHash();
    document.getElementById("view").value = wanted.seat;
    await load(wanted.seat);
    show(wanted.step);
    document.getElementById("first").onclick = () => show(0);
    document.getElementById("prev").onclick = () => show(at - 1);
    document.getElementById("next").onclick = () => show(at + 1);
    document.getElementById("last").onclick = () => show(data.steps.length - 1);
    document.getElementById("slider").oninput = (e) => show(parseInt(e.target.value, 10));
    document.getElementById("view").onchange = (e) => switchSeat(e.target.value);
    window.addEventListener("hashchange", () => {
      const h = readHash();
      if (h.seat !== focus) switchSeat(h.seat).then(() => show(h.step));
      else show(h.step);
    });
    document.querySelectorAll("#controls [disabled]").forEach((c) => { c.disabled = false; });
    document.addEventListener("keydown", (e) => {
      const tag = e.target && e.target.tagName;
      if (tag === "INPUT" || tag === "SELECT" || e.altKey || e.ctrlKey || e.metaKey) return;
      const moves = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: data.steps.length - 1 };
      if (e.key in moves) {
        e.preventDefault();
        show(moves[e.key]);
      }
    });
  }

  /** The table of a match in play from one live snapshot (server/views/spectator.py): the
   * public strip, the seats with hidden hands and the trick, the last move in words; `seats`
   * are the bots' names. Returns the snapshot's moves in words, as a step list shows them. */
  function live(game, seats, s) {
    const last = s.moves.length ? s.moves[s.moves.length - 1] : null;
    data = {
      game, focus: null, live: true,
      seats: seats.map((bot, seat) => ({ seat, bot, faults: {}, forfeited: false })),
      steps: [],
    };
    const step = {
      n: s.step, to_act: s.to_act, scores: s.scores, shared: s.table, own: [], faults: [],
      move: s.step && last ? { seat: last.seat, action: last.label, legal: null, ms: null } : null,
      hand_ended: s.hand_ended,
    };
    data.steps.push(step);
    const renderer = renderers[game];
    const ctx = context(step);
    moveLine(ctx);
    document.getElementById("table").replaceChildren(...[
      strip(ctx, renderer),
      tableOf(ctx, renderer),
      renderer.legend ? el("div", { id: "legend" }, renderer.legend()) : null,
    ].filter(Boolean));
    const ended = document.getElementById("last-hand");
    ended.replaceChildren();
    if (step.hand_ended) {
      ended.append(el("b", {}, `${renderer.handWord || "hand"} ${step.hand_ended.number + 1} ended`),
        renderer.handEnd(ctx, step.hand_ended.record));
    }
    return s.moves.map((m) => words(ctx, m.seat, m.label));
  }

  return { register, start, live, el };
})();
