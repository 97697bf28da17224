// Run page: live chart of the run's samples, fetched incrementally from the API (?after=<last id>).
// x = seconds since the step started (as the tool prints it); one series per step and metric, so the
// steps of a sweep overlay instead of running into each other. TPS, QPS and p95 latency each have
// their own axis (QPS is ~20x TPS: on one axis TPS would be drawn flat).
(function () {
  "use strict";
  var COLORS = ["#1f4fa0", "#c2410c", "#15803d", "#7e22ce", "#be123c", "#0e7490", "#a16207", "#4d7c0f", "#9d174d", "#334155"];

  // Interface text from Django's JavaScript catalogue (base.html), English when it is missing.
  var gettext = window.gettext || function (s) { return s; };
  var interpolate = window.interpolate || function (s, args) { return s.replace("%s", args[0]); };

  function runChart(canvas) {
    var d = canvas.dataset;
    var url = d.samplesUrl;
    var after = 0;
    var series = {};  // step -> {tps, qps, p95} datasets
    var chart = new Chart(canvas, {
      type: "line",
      data: { datasets: [] },
      options: { animation: false, responsive: true, maintainAspectRatio: false, parsing: false,
        interaction: { mode: "nearest", intersect: false },
        scales: {
          x: { type: "linear", title: { display: true, text: d.labelSeconds } },
          tps: { type: "linear", position: "left", beginAtZero: true, title: { display: true, text: d.labelTps } },
          qps: { type: "linear", position: "right", beginAtZero: true, grid: { drawOnChartArea: false }, title: { display: true, text: d.labelQps } },
          ms: { type: "linear", position: "right", beginAtZero: true, grid: { drawOnChartArea: false }, title: { display: true, text: d.labelP95 } }
        } }
    });
    function datasetsFor(step, threads) {
      if (series[step]) return series[step];
      var color = COLORS[(step - 1) % COLORS.length];
      var name = "#" + step + " (" + threads + " " + d.labelThreads + ")";
      var make = function (label, axis, extra) {
        var ds = Object.assign({ label: name + " " + label, data: [], yAxisID: axis, borderColor: color, backgroundColor: color,
                                 borderWidth: 2, pointRadius: 2 }, extra || {});
        chart.data.datasets.push(ds);
        return ds;
      };
      series[step] = { tps: make(d.labelTps, "tps"), qps: make(d.labelQps, "qps", { borderWidth: 1, borderDash: [6, 3] }),
                       p95: make(d.labelP95, "ms", { borderWidth: 1, borderDash: [2, 2] }) };
      return series[step];
    }
    var count = document.getElementById("sample-count");
    var total = 0;
    function isFinal() {
      var status = document.getElementById("run-status");
      return status && status.dataset.final === "true";
    }
    function poll() {
      var finalBefore = isFinal();
      fetch(url + "?after=" + after, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (r) { return r.ok ? r.json() : { results: [] }; })
        .then(function (body) {
          body.results.forEach(function (s) {
            after = Math.max(after, s.id);
            if (s.warmup) return;
            var ds = datasetsFor(s.step, s.threads);
            ds.tps.data.push({ x: s.t, y: s.tps });
            if (s.qps !== null) ds.qps.data.push({ x: s.t, y: s.qps });
            var ms = s.latency_p95_ms !== null ? s.latency_p95_ms : s.latency_avg_ms;
            if (ms !== null) ds.p95.data.push({ x: s.t, y: ms });
            total += 1;
          });
          chart.data.datasets.forEach(function (ds) { if (!ds.data.length) ds.hidden = true; else ds.hidden = false; });
          if (body.results.length) chart.update();
          if (count) count.textContent = interpolate(gettext("%s samples"), [total]);
          canvas.dataset.samples = String(total);
          if (!finalBefore || body.results.length) setTimeout(poll, 1000);
        })
        .catch(function () { setTimeout(poll, 3000); });
    }
    poll();
  }

  function sweepChart(canvas) {
    var points = canvas.dataset.steps.split(",").map(function (p) { var v = p.split(":"); return { x: +v[0], y: +v[1] }; });
    if (canvas._chart) canvas._chart.destroy();
    canvas._chart = new Chart(canvas, {
      type: "line",
      data: { datasets: [{ label: canvas.dataset.label, data: points, pointRadius: 4, borderColor: COLORS[0], backgroundColor: COLORS[0] }] },
      options: { animation: false, responsive: true, maintainAspectRatio: false, parsing: false,
        scales: { x: { type: "linear", ticks: { precision: 0 }, title: { display: true, text: canvas.dataset.labelThreads } }, y: { beginAtZero: true } } }
    });
  }

  function init() {
    if (!window.Chart) return;
    var canvas = document.getElementById("run-chart");
    if (canvas) runChart(canvas);
    var sweep = document.getElementById("sweep-chart");
    if (sweep) sweepChart(sweep);
    document.body.addEventListener("htmx:afterSwap", function () {
      var s = document.getElementById("sweep-chart");
      if (s && !s._chart) sweepChart(s);
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})();
