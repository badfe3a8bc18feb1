"use strict";
// Rating charts of a bot page: μ after each rated set with its μ±3σ band, drawn by the vendored
// uPlot from the history the server embedded as JSON (never parsed as HTML).
(() => {
  const history = JSON.parse(document.getElementById("history").textContent);
  window.ratingCharts = {};
  for (const [game, h] of Object.entries(history)) {
    const box = document.querySelector(`.chart[data-game="${CSS.escape(game)}"]`);
    const options = {
      width: Math.max(320, box.clientWidth || 800),
      height: 260,
      // x counts rated duplicate sets (a history row is written per bot and set, when its
      // last rotation is recorded): whole numbers only, and one point sits in the middle of a
      // one-set-wide axis instead of uPlot's 0–2 in tenths.
      scales: {
        x: { time: false, auto: false, range: h.x.length > 1 ? [h.x[0], h.x[h.x.length - 1]]
          : [h.x[0] - 0.5, h.x[0] + 0.5] },
      },
      axes: [
        {
          label: "rated sets",
          incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000],
          values: (u, splits) => {
            const shown = splits.map((v) => String(v));
            box.dataset.xTicks = shown.join(" ");
            return shown;
          },
        },
        { label: "TrueSkill μ" },
      ],
      series: [
        { label: "set" },
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
