// Compare page: the runs' interval samples overlaid (x = seconds since the step started; one line per
// run and step) and TPS against threads, one line per run, from the data the page embeds.
(function () {
  "use strict";
  var COLORS = ["#1f4fa0", "#c2410c", "#15803d", "#7e22ce", "#be123c", "#0e7490"];
  var DASHES = [[], [6, 3], [2, 2], [8, 2, 2, 2], [1, 3], [10, 4]];

  function intervalChart(canvas, data) {
    var index = +canvas.dataset.metric, datasets = [];
    data.samples.forEach(function (run, i) {
      run.steps.forEach(function (step, j) {
        datasets.push({ label: "#" + run.run + (run.steps.length > 1 ? " · " + step.threads : "") + (index === 2 ? " (" + run.latency + ")" : ""),
          data: step.points.filter(function (p) { return p[index] !== null; }).map(function (p) { return { x: p[0], y: p[index] }; }),
          borderColor: COLORS[i % COLORS.length], backgroundColor: COLORS[i % COLORS.length], borderDash: DASHES[j % DASHES.length],
          borderWidth: run.run === data.base ? 3 : 2, pointRadius: 1 });
      });
    });
    return new Chart(canvas, { type: "line", data: { datasets: datasets },
      options: { animation: false, responsive: true, maintainAspectRatio: false, parsing: false,
        interaction: { mode: "nearest", intersect: false },
        scales: { x: { type: "linear", title: { display: true, text: canvas.dataset.labelSeconds } },
                  y: { beginAtZero: true, title: { display: true, text: canvas.dataset.label } } } } });
  }

  function sweepChart(canvas, data) {
    var datasets = data.samples.map(function (run, i) {
      return { label: "#" + run.run, borderColor: COLORS[i % COLORS.length], backgroundColor: COLORS[i % COLORS.length], pointRadius: 4,
        data: data.by_threads.map(function (t) { return { x: t.threads, y: t.runs[i].tps }; }).filter(function (p) { return p.y !== null; }) };
    });
    return new Chart(canvas, { type: "line", data: { datasets: datasets },
      options: { animation: false, responsive: true, maintainAspectRatio: false, parsing: false,
        scales: { x: { type: "linear", ticks: { precision: 0 }, title: { display: true, text: canvas.dataset.labelThreads } },
                  y: { beginAtZero: true, title: { display: true, text: canvas.dataset.label } } } } });
  }

  // Series page: TPS of each run over time (one line per set-up), the noise band each run was judged
  // against, regressions marked.
  function seriesChart(canvas, data) {
    var datasets = data.groups.map(function (g, i) {
      return { label: g.label, data: g.points, borderColor: COLORS[i % COLORS.length], backgroundColor: COLORS[i % COLORS.length],
               spanGaps: true,
               pointStyle: g.points.map(function (_, j) { return data.regressions.indexOf(j) >= 0 ? "triangle" : "circle"; }),
               pointRadius: g.points.map(function (_, j) { return data.regressions.indexOf(j) >= 0 ? 8 : 3; }),
               pointBorderColor: g.points.map(function (_, j) { return data.regressions.indexOf(j) >= 0 ? "#b91c1c" : COLORS[i % COLORS.length]; }),
               pointBackgroundColor: g.points.map(function (_, j) { return data.regressions.indexOf(j) >= 0 ? "#b91c1c" : COLORS[i % COLORS.length]; }),
               pointHitRadius: 6 };
    });
    var low = data.bands.map(function (b) { return b ? b[0] : null; }), high = data.bands.map(function (b) { return b ? b[1] : null; });
    if (low.some(function (v) { return v !== null; })) {
      datasets.push({ label: canvas.dataset.labelBand, data: high, borderColor: "rgba(100,116,139,0.4)", pointRadius: 0, borderWidth: 1, fill: "+1",
                      backgroundColor: "rgba(100,116,139,0.12)" });
      datasets.push({ label: "", data: low, borderColor: "rgba(100,116,139,0.4)", pointRadius: 0, borderWidth: 1, fill: false });
    }
    return new Chart(canvas, { type: "line", data: { labels: data.labels, datasets: datasets },
      options: { animation: false, responsive: true, maintainAspectRatio: false,
        plugins: { legend: { labels: { filter: function (item) { return item.text !== ""; } } } },
        scales: { y: { beginAtZero: true, title: { display: true, text: canvas.dataset.label } } } } });
  }

  function init() {
    var series = document.getElementById("series-data"), sc = document.getElementById("series-chart");
    if (window.Chart && series && sc) sc._chart = seriesChart(sc, JSON.parse(series.textContent));
    var script = document.getElementById("compare-data");
    if (!window.Chart || !script) return;
    var data = JSON.parse(script.textContent);
    ["compare-tps", "compare-latency"].forEach(function (id) {
      var c = document.getElementById(id);
      if (c) c._chart = intervalChart(c, data);
    });
    var s = document.getElementById("compare-sweep");
    if (s) s._chart = sweepChart(s, data);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})();
