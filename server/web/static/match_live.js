"use strict";
// A running match watched live from server-sent events: the step, whose turn, the scores and
// the moves by their public labels, written as text (never HTML). When the match ends the page
// reloads, and the server shows the replay if every rotation of its deal has been played.
(() => {
  const root = document.getElementById("live-match");
  if (!root) return;
  const text = (id, value) => {
    document.getElementById(id).textContent = String(value);
  };
  const moves = document.getElementById("live-moves");
  const source = new EventSource(`/api/matches/${encodeURIComponent(root.dataset.match)}/live`);
  source.addEventListener("step", (e) => {
    const s = JSON.parse(e.data);
    if (s.state === "over") {
      source.close();
      location.reload();
      return;
    }
    if (s.state === "waiting") {
      text("live-note", "Not being played by this server yet: followed once it is; "
        + "the page reloads when it ends.");
      return;
    }
    text("live-step", s.step);
    text("live-to-act", s.to_act === null ? "–" : s.to_act);
    text("live-scores", s.scores ? s.scores.join(" · ") : "–");
    text("live-note", s.public ? "" : `Moves hidden: ${root.dataset.hidden}.`);
    s.moves.forEach((m, i) => {
      if (s.first + i < moves.children.length) return;  // already shown (a reconnect)
      const item = document.createElement("li");
      item.className = "live-move";
      item.textContent = `seat ${m.seat}: ${m.label}`;
      moves.append(item);
    });
    root.dataset.step = String(s.step);
  });
})();
