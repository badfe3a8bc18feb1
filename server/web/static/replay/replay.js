"use strict";
// The replay viewer: loads one match's JSON (computed by the server through the game engine),
// steps through it and draws each step with the game's renderer. Bot-supplied strings only
// ever reach the page as text nodes.
const Replay = (() => {
  const { el } = Cards;
  const renderers = {};
  const root = document.getElementById("replay");
  const matchId = root.dataset.match;
  let data = null;
  let at = 0;
  let focus = "";

  /** A game's renderer: deck, columns, cells(ctx, s), hand(ctx, s), info(ctx), trick(ctx),
   * lastTrick(ctx), handEnd(ctx, record). */
  function register(game, renderer) {
    renderers[game] = renderer;
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

  /** What a renderer is given for one step. */
  function context(step) {
    const full = data.focus === null;
    const view = (s) => {
      if (full) return { ...step.shared, ...(step.own[s] || {}) };
      return s === data.focus ? step.shared : null;
    };
    const renderer = renderers[data.game];
    return {
      step, data, full, focus: data.focus, view,
      pub: full ? view(0) : step.shared,
      known: (s) => full || s === data.focus,
      name: (s) => data.seats[s].bot,
      card: (code) => Cards.card(renderer.deck, code),
      cards: (codes) => Cards.cards(renderer.deck, codes),
      hand: (codes) => Cards.cards(renderer.deck, codes, "hand-cards"),
      seatOf: (leader, i) => (leader + i) % data.seats.length,
    };
  }

  function seatLabel(s) {
    return s === null || s === undefined || s < 0 ? "–" : `seat ${s} ${data.seats[s].bot}`;
  }

  function plays(ctx, list, id) {
    return el("div", { id, class: "plays" }, (list || []).map((p) =>
      el("span", { class: "play", "data-seat": p.seat },
        el("small", {}, `${p.seat}`), ctx.card(p.card), p.note ? el("small", {}, p.note) : null)));
  }

  function seatsTable(ctx, renderer) {
    const step = ctx.step;
    const faulted = new Set(step.faults.map((f) => f.seat));
    const head = el("tr", {}, el("th", { class: "num" }, "seat"), el("th", {}, "bot"),
      el("th", { class: "num" }, "score"),
      renderer.columns.map((c) => el("th", { class: "num" }, c)), el("th", {}, "hand"));
    const rows = data.seats.map((seat, s) => {
      const classes = ["seat"];
      if (step.to_act === s) classes.push("to-act");
      if (step.move && step.move.seat === s) classes.push("moved");
      if (faulted.has(s)) classes.push("faulted");
      if (seat.forfeited) classes.push("forfeited");
      return el("tr", { class: classes.join(" "), "data-seat": s },
        el("td", { class: "num" }, step.to_act === s ? "▶ " : "", String(s)),
        el("td", { class: "bot" }, seat.bot, faulted.has(s) ? el("span", { class: "fault" }, " ⚠ fault") : null,
          seat.forfeited ? el("span", { class: "fault" }, " (forfeited)") : null),
        el("td", { class: "num score" }, String(step.scores[s])),
        renderer.cells(ctx, s).map((v) => el("td", { class: "num" }, v)),
        el("td", { class: "hand" }, renderer.hand(ctx, s)));
    });
    return el("table", { id: "seats" }, head, rows);
  }

  function moveLine(step) {
    const box = document.getElementById("move");
    box.replaceChildren();
    if (step.move) {
      const m = step.move;
      box.append(el("span", {}, `${seatLabel(m.seat)}: `), el("b", { id: "action" }, m.action),
        m.ms === null ? "" : ` in ${m.ms.toFixed(1)} ms`,
        m.legal ? el("span", { id: "legal" }, `; legal: ${m.legal.join(" ")}`) : "");
    } else {
      box.append(el("b", { id: "action" }, "–"), " (the deal)");
    }
    box.append(el("div", {}, "to act: ", el("span", { id: "to-act" }, seatLabel(step.to_act))));
  }

  function faultLines(step) {
    document.getElementById("faults").replaceChildren(...step.faults.map((f) =>
      el("div", { class: "fault", "data-seat": f.seat },
        `fault ${f.kind} of ${seatLabel(f.seat)}: ${f.detail}`,
        f.fallback ? ` (fallback ${f.fallback})` : "")));
  }

  function moveList() {
    const list = document.getElementById("moves");
    list.replaceChildren(...data.steps.slice(1).map((s) => {
      // A seat's view lists only the moves it has seen: later ones are links without text.
      const seen = data.focus === null || s.n <= at;
      return el("li", { id: `s${s.n}` },
        el("a", { href: `#step=${s.n}${focus === "" ? "" : `&seat=${focus}`}` }, String(s.n)),
        seen ? ` ${seatLabel(s.move.seat)}: ${s.move.action}` : "",
        seen && s.faults.length ? el("span", { class: "fault" }, " ⚠") : null,
        seen && s.hand_ended ? el("b", {}, ` · hand ${s.hand_ended.number + 1} ended`) : null);
    }));
  }

  function show(n) {
    if (!data) return;
    at = Math.max(0, Math.min(data.steps.length - 1, n));
    const step = data.steps[at];
    const renderer = renderers[data.game];
    const ctx = context(step);
    document.getElementById("step").textContent = String(at);
    document.getElementById("slider").value = String(at);
    moveLine(step);
    faultLines(step);
    const table = document.getElementById("table");
    const trick = renderer.trick ? renderer.trick(ctx) : null;
    const last = renderer.lastTrick ? renderer.lastTrick(ctx) : null;
    table.replaceChildren(...[
      seatsTable(ctx, renderer),
      el("div", { id: "info" }, renderer.info(ctx)),
      trick === null ? null : el("div", {}, "trick: ", plays(ctx, trick, "trick")),
      last === null ? null : el("div", {}, "last trick: ", plays(ctx, last, "last-trick")),
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

  return { register, start, el };
})();
