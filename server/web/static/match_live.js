"use strict";
// A running match watched live from server-sent events, wherever it is played: the table as
// every seat knows it, drawn by the replay's renderers (Replay.live), the step, whose turn,
// the scores, and the moves by their public labels in words. Bot-supplied strings reach the
// page as text nodes only. When the match ends the page reloads, and the server shows the
// replay if every rotation of its deal has been played.
(() => {
  const root = document.getElementById("live-match");
  if (!root) return;
  const seats = JSON.parse(root.dataset.seats);
  const text = (id, value) => {
    document.getElementById(id).textContent = String(value);
  };
  const list = document.getElementById("live-moves");
  const moves = [];  // every public move so far: an event carries those from index `first`
  const source = new EventSource(`/api/matches/${encodeURIComponent(root.dataset.match)}/live`);
  source.addEventListener("step", (e) => {
    const s = JSON.parse(e.data);
    if (s.state === "over") {
      source.close();
      location.reload();
      return;
    }
    if (s.state === "waiting") {
      text("live-note", "Not being played yet: followed once it is; "
        + "the page reloads when it ends.");
      return;
    }
    text("live-step", s.step);
    text("live-to-act", s.to_act === null ? "–" : s.to_act);
    text("live-scores", s.scores ? s.scores.join(" · ") : "–");
    text("live-note", s.public ? "" : `Moves hidden: ${root.dataset.hidden}.`);
    s.moves.forEach((m, i) => { moves[s.first + i] = m; });
    if (s.public && s.table) {
      const said = Replay.live(root.dataset.game, seats, { ...s, moves: moves.slice(0, s.step) });
      list.replaceChildren(...said.map((node, i) => {
        const m = moves[i];
        return Replay.el("li", { class: "live-move", "data-seat": m.seat, "data-label": m.label }, node);
      }));
    }
    root.dataset.step = String(s.step);
  });
})();
