"use strict";
// Rating charts of a bot page: μ per rated set with its μ±3σ band, drawn by the vendored
// uPlot from the history the server embedded as JSON (never parsed as HTML).
(() => {
  const history = JSON.parse(document.getElementById("history").textContent);
  window.ratingCharts = {};
  for (const [game, h] of Object.entries(history)) {
    const box = document.querySelector(`.chart[data-game="${CSS.escape(game)}"]`);
    const options = {
      width: Math.max(320, box.clientWidth || 800),
      height: 260,
      scales: { x: { time: false } },
      axes: [{ label: "rated sets" }, { label: "TrueSkill μ" }],
      series: [
        { label: "match" },
        { label: "μ+3σ", stroke: "#90a4ae" },
        { label: "μ", stroke: "#1565c0", width: 2, points: { show: true, size: 4 } },
        { label: "μ−3σ", stroke: "#90a4ae" },
      ],
      bands: [{ series: [1, 3], fill: "rgba(21, 101, 192, 0.12)" }],
    };
    const chart = new uPlot(options, [h.x, h.high, h.mu, h.low], box);
    window.ratingCharts[game] = chart;
    box.dataset.points = String(chart.data[0].length);
  }
})();
