// Run page: live chart of the run's samples, as the page's one update stream brings them (init, below).
// x = seconds since the step started (as the tool prints it); one series per step and metric, so the
// steps of a sweep overlay instead of running into each other. TPS, QPS and p95 latency each have
// their own axis (QPS is ~20x TPS: on one axis TPS would be drawn flat).
(function () {
  "use strict";
  var COLORS = ["#1f4fa0", "#c2410c", "#15803d", "#7e22ce", "#be123c", "#0e7490", "#a16207", "#4d7c0f", "#9d174d", "#334155"];
  var MARKERS = ["circle", "triangle", "rect", "rectRot", "crossRot", "star"];

  // The legend names only what was measured (pgbench has no QPS: no struck-out "QPS" entry).
  function measured(item, data) { return data.datasets[item.datasetIndex].data.length > 0; }

  // Dataset options for series number i: a colour of its own (10 colours) and a marker shape (6 shapes).
  function colored(i, extra) {
    var color = COLORS[i % COLORS.length];
    return Object.assign({ borderColor: color, backgroundColor: color, pointStyle: MARKERS[Math.floor(i / COLORS.length) % MARKERS.length] }, extra || {});
  }

  // Interface text from Django's JavaScript catalogue (base.html), English when it is missing.
  var gettext = window.gettext || function (s) { return s; };
  var interpolate = window.interpolate || function (s, args) { return s.replace("%s", args[0]); };

  // Server-side evidence: the server's TPS against the tool's, running threads, buffer hit ratio and the
  // client host's CPU, per step, on the tool chart's time axis (seconds since the step started).
  function evidenceChart(canvas) {
    var d = canvas.dataset;
    var series = {};
    var chart = new Chart(canvas, {
      type: "line",
      data: { datasets: [] },
      options: { animation: false, responsive: true, maintainAspectRatio: false, parsing: false,
        interaction: { mode: "nearest", intersect: false }, plugins: { legend: { labels: { filter: measured } } },
        scales: {
          x: { type: "linear", title: { display: true, text: d.labelSeconds } },
          tps: { type: "linear", position: "left", beginAtZero: true, title: { display: true, text: d.labelTps } },
          pct: { type: "linear", position: "right", min: 0, max: 100, grid: { drawOnChartArea: false }, title: { display: true, text: d.labelPercent } },
          count: { type: "linear", position: "right", beginAtZero: true, ticks: { precision: 0 }, grid: { drawOnChartArea: false }, title: { display: true, text: d.labelCount } }
        } }
    });
    function datasetsFor(step) {
      if (series[step]) return series[step];
      var color = COLORS[(step - 1) % COLORS.length];
      var make = function (label, axis, extra) {
        var ds = Object.assign({ label: "#" + step + " " + label, data: [], yAxisID: axis, borderColor: color, backgroundColor: color,
                                 borderWidth: 2, pointRadius: 1 }, extra || {});
        chart.data.datasets.push(ds);
        return ds;
      };
      var base = (step - 1) * 5;  // each series its own colour (and marker), the dash only a second cue
      series[step] = { server: make(d.labelServerTps, "tps", colored(base)),
                       tool: make(d.labelToolTps, "tps", colored(base + 1, { borderWidth: 1, borderDash: [6, 3] })),
                       running: make(d.labelRunning, "count", colored(base + 2, { borderWidth: 1, borderDash: [2, 2], stepped: true })),
                       hit: make(d.labelHit, "pct", colored(base + 3, { borderWidth: 1, borderDash: [8, 2, 2, 2] })),
                       cpu: make(d.labelCpu, "pct", colored(base + 4, { borderWidth: 1, borderDash: [1, 3] })) };
      return series[step];
    }
    var pending = false;
    function redraw() {
      if (pending) return;
      pending = true;
      setTimeout(function () {
        pending = false;
        chart.data.datasets.forEach(function (ds) { ds.hidden = !ds.data.length; });
        chart.update();
      }, 0);
    }
    var total = 0;
    var count = document.getElementById("server-sample-count");
    function add(samples) {
      samples.forEach(function (s) {
        if (s.warmup) return;
        var ds = datasetsFor(s.step);
        if (s.server_tps !== null) ds.server.data.push({ x: s.t, y: s.server_tps });
        if (s.running !== null) ds.running.data.push({ x: s.t, y: s.running });
        if (s.buffer_hit_pct !== null) ds.hit.data.push({ x: s.t, y: s.buffer_hit_pct });
        if (s.client_cpu_pct !== null) ds.cpu.data.push({ x: s.t, y: s.client_cpu_pct });
        total += 1;
      });
      if (samples.length) redraw();
      if (count) count.textContent = interpolate(gettext("%s server samples"), [total]);
      canvas.dataset.samples = String(total);
    }
    return { add: add, addToolSample: function (s) { datasetsFor(s.step).tool.data.push({ x: s.t, y: s.tps }); redraw(); } };
  }

  function histogramChart(canvas) {
    var buckets = JSON.parse(canvas.dataset.histogram || "[]");
    if (canvas._chart) canvas._chart.destroy();
    canvas._chart = new Chart(canvas, {
      type: "bar",
      data: { labels: buckets.map(function (b) { return b[0]; }),
              datasets: [{ label: canvas.dataset.label, data: buckets.map(function (b) { return b[1]; }), backgroundColor: COLORS[0] }] },
      options: { animation: false, responsive: true, maintainAspectRatio: false,
        scales: { x: { title: { display: true, text: canvas.dataset.labelMs } }, y: { beginAtZero: true } } }
    });
  }

  function runChart(canvas, evidence) {
    var d = canvas.dataset;
    var url = d.samplesUrl;
    var after = 0;
    var series = {};  // step -> {tps, qps, p95} datasets
    var chart = new Chart(canvas, {
      type: "line",
      data: { datasets: [] },
      options: { animation: false, responsive: true, maintainAspectRatio: false, parsing: false,
        interaction: { mode: "nearest", intersect: false }, plugins: { legend: { labels: { filter: measured } } },
        scales: {
          x: { type: "linear", title: { display: true, text: d.labelSeconds } },
          tps: { type: "linear", position: "left", beginAtZero: true, title: { display: true, text: d.labelTps } },
          qps: { type: "linear", position: "right", display: false, beginAtZero: true, grid: { drawOnChartArea: false }, title: { display: true, text: d.labelQps } },
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
      var base = (step - 1) * 3;  // TPS, QPS and p95 of a step in three colours, not one colour and three dashes
      // QPS is a multiple of TPS (20 statements a sysbench transaction): on their own zero-based axes the two lines
      // coincide, so each metric has its own marker too (QPS, drawn after TPS, lies over it).
      series[step] = { tps: make(d.labelTps, "tps", colored(base, { pointStyle: "circle", pointRadius: 4 })),
                       qps: make(d.labelQps, "qps", colored(base + 1, { borderWidth: 2, borderDash: [6, 3], pointStyle: "triangle", pointRadius: 4 })),
                       p95: make(d.labelP95, "ms", colored(base + 2, { borderWidth: 1, borderDash: [2, 2], pointStyle: "rect", pointRadius: 3 })) };
      return series[step];
    }
    var count = document.getElementById("sample-count");
    var total = 0;
    function add(samples) {
      samples.forEach(function (s) {
        if (s.warmup) return;
        var ds = datasetsFor(s.step, s.threads);
        ds.tps.data.push({ x: s.t, y: s.tps });
        if (s.qps !== null) ds.qps.data.push({ x: s.t, y: s.qps });
        var ms = s.latency_p95_ms !== null ? s.latency_p95_ms : s.latency_avg_ms;
        if (ms !== null) ds.p95.data.push({ x: s.t, y: ms });
        if (evidence) evidence.addToolSample(s);
        total += 1;
      });
      chart.data.datasets.forEach(function (ds) { ds.hidden = !ds.data.length; });
      // An axis only for what was measured: pgbench prints no QPS, so its runs have no QPS axis.
      chart.options.scales.qps.display = chart.data.datasets.some(function (ds) { return ds.yAxisID === "qps" && ds.data.length; });
      if (samples.length) chart.update();
      if (count) count.textContent = interpolate(gettext("%s samples"), [total]);
      canvas.dataset.samples = String(total);
    }
    return { add: add };
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

  // A capacity search (issue 35): each step's p95 and p99 against the rate it achieved, passing and failing steps
  // told apart by colour and marker, the p95 bound a dashed line. Latency on a logarithmic axis when it spans more
  // than 20x (a failing step's p95 can be 100x a passing one's).
  function capacityChart(canvas) {
    var data = document.getElementById("capacity-steps-data");
    var steps = JSON.parse(data.textContent).filter(function (s) { return s.achieved_tps != null; });
    steps.sort(function (a, b) { return a.achieved_tps - b.achieved_tps; });
    var bound = +canvas.dataset.bound;
    var point = function (s, key) { return { x: s.achieved_tps, y: s[key], offered: s.offered_tps }; };
    var p95 = function (passed) {
      return steps.filter(function (s) { return s.passed === passed && s.p95_ms != null; }).map(function (s) { return point(s, "p95_ms"); });
    };
    var xs = steps.map(function (s) { return s.achieved_tps; });
    var ys = steps.reduce(function (all, s) { return all.concat([s.p95_ms, s.p99_ms]); }, [bound]).filter(function (v) { return v > 0; });
    var log = ys.length && Math.max.apply(null, ys) / Math.min.apply(null, ys) > 20;
    var offered = canvas.dataset.labelOffered;
    if (canvas._chart) canvas._chart.destroy();
    canvas._chart = new Chart(canvas, {
      type: "scatter",
      data: { datasets: [
        { label: canvas.dataset.labelPassed, data: p95(true), pointRadius: 5, pointStyle: "circle", borderColor: COLORS[2], backgroundColor: COLORS[2] },
        { label: canvas.dataset.labelFailed, data: p95(false), pointRadius: 7, pointStyle: "crossRot", borderWidth: 3, borderColor: COLORS[4], backgroundColor: COLORS[4] },
        { label: canvas.dataset.labelP99, data: steps.filter(function (s) { return s.p99_ms != null; }).map(function (s) { return point(s, "p99_ms"); }),
          showLine: true, borderDash: [2, 2], pointRadius: 3, pointStyle: "triangle", borderColor: COLORS[9], backgroundColor: COLORS[9] },
        { label: canvas.dataset.labelBound + " " + bound + " ms", data: xs.length ? [{ x: Math.min.apply(null, xs), y: bound }, { x: Math.max.apply(null, xs), y: bound }] : [],
          showLine: true, borderDash: [8, 4], pointRadius: 0, borderColor: COLORS[1], backgroundColor: COLORS[1] }
      ] },
      options: { animation: false, responsive: true, maintainAspectRatio: false, parsing: false,
        plugins: { tooltip: { callbacks: { label: function (ctx) {
          var p = ctx.raw;
          return ctx.dataset.label + ": " + p.y + " ms @ " + p.x + " TPS" + (p.offered != null ? " (" + offered + " " + p.offered + ")" : "");
        } } } },
        // Room right of the highest rate, so its marker is not drawn on the edge (one step: mid-chart).
        scales: { x: { type: "linear", beginAtZero: true, suggestedMax: xs.length ? Math.max.apply(null, xs) * (xs.length === 1 ? 2 : 1.1) : undefined,
                       title: { display: true, text: canvas.dataset.labelRate } },
                  y: { type: log ? "logarithmic" : "linear", beginAtZero: !log, title: { display: true, text: canvas.dataset.labelMs } } } }
    });
  }

  // The log keeps its last lines on the page (the whole log is in the export).
  var LOG_LINES = 400;
  var RETRY_MS = 3000;

  // The page's one update stream: each answer of #run-live (templates/runs/run_detail.html, one request per
  // report interval) carries the new samples of both charts; the status, set-up, results and the log's new
  // lines arrive beside it as htmx out-of-band swaps.
  function init() {
    if (!window.Chart) return;
    var ev = document.getElementById("evidence-chart");
    var evidence = ev ? evidenceChart(ev) : null;
    var canvas = document.getElementById("run-chart");
    var tool = canvas ? runChart(canvas, evidence) : null;
    function drawStatic() {
      var s = document.getElementById("sweep-chart");
      if (s && !s._chart) sweepChart(s);
      var h = document.getElementById("latency-histogram");
      if (h && !h._chart) histogramChart(h);
      var c = document.getElementById("capacity-chart");
      if (c && !c._chart) capacityChart(c);
    }
    drawStatic();
    // A poll that failed (the server restarting, the network) is asked again: the stream must not end on it.
    document.body.addEventListener("htmx:afterRequest", function (event) {
      var elt = event.detail.elt;
      if (elt.id === "run-live" && !event.detail.successful) {
        setTimeout(function () { if (elt.isConnected) htmx.trigger(elt, "retry"); }, RETRY_MS);
      }
    });
    document.body.addEventListener("htmx:afterSettle", function () {
      var data = document.getElementById("run-live-data");
      if (data && !data._read) {
        data._read = true;
        var live = JSON.parse(data.textContent);
        if (evidence) evidence.add(live.server_samples);
        if (tool) tool.add(live.samples);
      }
      var log = document.getElementById("run-log");
      if (log) {
        var lines = log.textContent.split("\n");
        if (lines.length > LOG_LINES + 1) log.textContent = lines.slice(-LOG_LINES - 1).join("\n");
      }
      drawStatic();
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})();
