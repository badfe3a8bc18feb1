"use strict";
// Live pages: a tournament's progress, standings and cross-table, and a game's leaderboard,
// rewritten (as text, never HTML) from server-sent events whenever a match finishes.
(() => {
  const el = (tag, attrs, ...children) => {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v !== null) node.setAttribute(k, v);
    for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return node;
  };
  const botLink = (bot) => el("a", { href: `/bots/${encodeURIComponent(bot)}` }, bot);
  // A bot's name with its version after the first ("v2") and its author, as the pages write them.
  const botCell = (row, ...after) => el("td", {}, botLink(row.bot),
    ...(row.version ? [" ", el("span", { class: "version" }, row.version)] : []),
    ...after, " ", el("small", { class: "author" }, `by ${row.author}`));

  function standingRow(row) {
    return el("tr", { "data-bot": row.bot }, ...row.cells.map((cell, i) => {
      if (i === 1) {
        return botCell(row, ...(row.retired ? [" ", el("small", {}, "(retired)")] : []));
      }
      return el("td", { class: i === 5 ? null : "num" }, cell);
    }));
  }

  function crossTable(table, rows) {
    const head = el("tr", {}, el("th", {}), ...rows.map((r) => el("th", { class: "num" }, r.bot)));
    const body = rows.map((r) => el("tr", { "data-bot": r.bot }, el("th", {}, r.bot),
      ...r.cells.map((c) => (c === null ? el("td", { class: "num muted" }, "·")
        : el("td", { class: "num", title: `${c.n} deals` }, c.mean,
          ...(c.interval ? [el("br"), el("small", {}, c.interval)] : []))))));
    table.tHead.replaceChildren(head);
    table.tBodies[0].replaceChildren(...body);
  }

  const live = document.getElementById("live");
  if (live) {
    const all = new URLSearchParams(location.search).get("cross") === "all" ? "?cross=all" : "";
    const source = new EventSource(`/api/tournaments/${live.dataset.tournament}/events${all}`);
    source.addEventListener("tournament", (e) => {
      const t = JSON.parse(e.data);
      document.getElementById("status").textContent = t.status;
      document.getElementById("finished").textContent = String(t.finished);
      document.getElementById("scheduled").textContent = String(t.scheduled);
      const bar = document.getElementById("progress");
      bar.max = Math.max(1, t.scheduled);
      bar.value = t.finished;
      document.querySelector("#standings tbody").replaceChildren(...t.standings.map(standingRow));
      crossTable(document.getElementById("cross"), t.cross);
      live.dataset.updates = String(Number(live.dataset.updates || "0") + 1);
    });
  }

  const board = document.getElementById("rankings");
  if (board && board.dataset.game) {
    const source = new EventSource(`/api/rankings/${encodeURIComponent(board.dataset.game)}/events`);
    source.addEventListener("rankings", (e) => {
      const rows = JSON.parse(e.data).rows;
      const body = board.tBodies[0];
      body.replaceChildren(...(rows.length ? rows.map((r) => el("tr", { "data-bot": r.bot },
        el("td", { class: "num" }, r.rank), botCell(r),
        ...r.cells.map((c) => el("td", { class: "num" }, c))))
        : [el("tr", {}, el("td", { colspan: "8" }, "No rated matches yet."))]));
      board.dataset.updates = String(Number(board.dataset.updates || "0") + 1);
    });
  }
})();
