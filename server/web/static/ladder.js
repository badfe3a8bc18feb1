"use strict";
// The ladder page, rewritten (as text, never HTML) from server-sent events whenever a match
// finishes: its field ranked, provisional bots marked, and its latest sets.
(() => {
  const summary = document.getElementById("ladder-summary");
  if (!summary) return;
  const el = (tag, attrs, ...children) => {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v !== null) node.setAttribute(k, v);
    for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return node;
  };
  const row = (r) => el("tr", { "data-bot": r.bot, class: r.provisional ? "provisional" : null },
    el("td", { class: "num" }, r.rank),
    el("td", {}, el("a", { href: `/bots/${encodeURIComponent(r.bot)}` }, r.bot),
      ...(r.version ? [" ", el("span", { class: "version" }, r.version)] : []),
      ...(r.provisional ? [" ", el("small", { class: "mark" }, "provisional")] : []),
      " ", el("small", { class: "author" }, `by ${r.author}`)),
    ...r.cells.map((c) => el("td", { class: "num" }, c)));
  const set = (s) => el("tr", { "data-set": s.number },
    el("td", { class: "num" }, el("a", { href: `/matches/${s.first_match}` }, s.number)),
    el("td", {}, s.at || "in play"),
    el("td", {}, s.table.map((t) => `${t.bot} ${t.total}`).join(", ")));
  const source = new EventSource(`/api/ladders/${encodeURIComponent(summary.dataset.game)}/events`);
  source.addEventListener("ladder", (e) => {
    const ladder = JSON.parse(e.data);
    if (!ladder.rows) return;
    document.getElementById("sets").textContent = String(ladder.sets);
    document.querySelector("#ladder tbody").replaceChildren(...ladder.rows.map(row));
    document.querySelector("#recent tbody").replaceChildren(...ladder.recent.map(set));
    summary.dataset.updates = String(Number(summary.dataset.updates || "0") + 1);
  });
})();
