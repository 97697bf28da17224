// Draws every <figure data-chart="ID"> from the JSON in #ID-data (built by whitepaper/charts.py):
// TPS/QPS/... against vCPUs on a linear axis, one line per series, a metric switch and a per-vCPU toggle.
// Charts are destroyed before an htmx swap and re-created after it.
(function () {
  "use strict";
  const PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
                   "#7f7f7f", "#bcbd22"];
  const charts = new Map();

  function datasets(spec, metric, perCore) {
    return spec.series.map(function (series, i) {
      const colour = PALETTE[i % PALETTE.length];
      return {
        label: series.label,
        borderColor: colour,
        backgroundColor: colour,
        pointStyle: ["circle", "rect", "triangle", "rectRot", "star", "crossRot"][i % 6],
        pointRadius: 4,
        data: series.points.filter(function (p) { return p[metric] !== null && p[metric] !== undefined; })
          .map(function (p) {
            return {x: p.x, y: perCore ? Math.round(p[metric] / p.x * 100) / 100 : p[metric],
                    flavor: p.flavor, memory_gb: p.memory_gb};
          }),
      };
    });
  }

  // Single flavours side by side: one bar per series (its one row), not points stacked at one x.
  function bars(spec, metric, perCore) {
    const shown = spec.series.map(function (series) {
      const p = series.points.find(function (p) { return p[metric] !== null && p[metric] !== undefined; });
      return {label: series.label, point: p};
    });
    return {
      labels: shown.map(function (s) { return s.label; }),
      datasets: [{
        label: metricLabel(spec, metric, perCore),
        backgroundColor: shown.map(function (s, i) { return PALETTE[i % PALETTE.length]; }),
        data: shown.map(function (s) {
          const p = s.point;
          if (!p) return {x: s.label, y: null};
          return {x: s.label, y: perCore ? Math.round(p[metric] / p.x * 100) / 100 : p[metric],
                  vcpus: p.x, flavor: p.flavor, memory_gb: p.memory_gb};
        }),
      }],
    };
  }

  function metricLabel(spec, metric, perCore) {
    const m = spec.metrics.find(function (m) { return m.name === metric; });
    return (m ? m.label : metric) + (perCore ? " " + spec.per_core_label : "");
  }

  function draw(figure) {
    const id = figure.dataset.chart;
    const canvas = document.getElementById(id);
    const data = document.getElementById(id + "-data");
    if (!canvas || !data || typeof Chart === "undefined") return;
    const spec = JSON.parse(data.textContent);
    if (!spec.metrics.length) return;
    const chosen = spec.metrics.find(function (m) { return m.name === spec.initial_metric; });
    const state = {metric: chosen ? chosen.name : spec.metrics[0].name, perCore: !!(chosen && spec.initial_per_core)};
    const bar = spec.kind === "bar";
    const chart = new Chart(canvas, {
      type: bar ? "bar" : "line",
      data: bar ? bars(spec, state.metric, state.perCore) : {datasets: datasets(spec, state.metric, state.perCore)},
      options: {
        parsing: false, responsive: true, maintainAspectRatio: false, animation: false,
        interaction: {mode: "nearest", intersect: false},
        scales: {
          x: bar ? {type: "category"} : {type: "linear", title: {display: true, text: spec.x_label}, beginAtZero: true},
          y: {beginAtZero: true, title: {display: true, text: metricLabel(spec, state.metric, state.perCore)}},
        },
        plugins: {
          legend: {display: !bar},
          tooltip: {callbacks: {label: function (ctx) {
            const raw = ctx.raw;
            if (bar) return raw.y.toLocaleString() + " @ " + raw.vcpus + " " + spec.x_label + " / " + raw.memory_gb + " GB" +
              (raw.flavor ? " (" + raw.flavor + ")" : "");
            return ctx.dataset.label + ": " + raw.y.toLocaleString() + " @ " + raw.x + " " + spec.x_label + " / " + raw.memory_gb + " GB" +
              (raw.flavor ? " (" + raw.flavor + ")" : "");
          }}},
        },
      },
    });
    charts.set(id, chart);
    figure.querySelectorAll("[data-per-core]").forEach(function (box) { box.checked = state.perCore; });
    function update() {
      if (bar) chart.data = bars(spec, state.metric, state.perCore);
      else chart.data.datasets = datasets(spec, state.metric, state.perCore);
      chart.options.scales.y.title.text = metricLabel(spec, state.metric, state.perCore);
      chart.update();
      figure.querySelectorAll("[data-metric]").forEach(function (b) {
        b.setAttribute("aria-pressed", b.dataset.metric === state.metric ? "true" : "false");
      });
    }
    figure.querySelectorAll("[data-metric]").forEach(function (button) {
      button.addEventListener("click", function () { state.metric = button.dataset.metric; update(); });
    });
    figure.querySelectorAll("[data-per-core]").forEach(function (box) {
      box.addEventListener("change", function () { state.perCore = box.checked; update(); });
    });
  }

  function destroyIn(root) {
    root.querySelectorAll("figure[data-chart]").forEach(function (figure) {
      const chart = charts.get(figure.dataset.chart);
      if (chart) { chart.destroy(); charts.delete(figure.dataset.chart); }
    });
  }

  function drawIn(root) {
    if (root.matches && root.matches("figure[data-chart]")) { destroyIn(root.parentNode); draw(root); return; }
    root.querySelectorAll("figure[data-chart]").forEach(function (figure) {
      const old = charts.get(figure.dataset.chart);
      if (old) { old.destroy(); charts.delete(figure.dataset.chart); }
      draw(figure);
    });
  }

  document.addEventListener("DOMContentLoaded", function () { drawIn(document); });
  document.addEventListener("htmx:beforeSwap", function (e) { destroyIn(e.detail.target); });
  document.addEventListener("htmx:afterSettle", function (e) { drawIn(e.detail.elt); });
  window.perfdashCharts = charts;
})();
