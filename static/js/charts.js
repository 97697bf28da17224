// Draws every <figure data-chart="ID"> from the JSON in #ID-data (built by whitepaper/charts.py):
// TPS/QPS/... against vCPUs on a linear axis, one line per series, a metric switch and a per-vCPU toggle.
// Charts are destroyed before an htmx swap and re-created after it.
(function () {
  "use strict";
  const PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
                   "#7f7f7f", "#bcbd22"];
  const SHAPES = ["circle", "rect", "triangle", "rectRot", "star", "crossRot"];
  const charts = new Map();

  // A series' colour and marker shape: colours repeat after 10 series, shapes after 6, the pair after 30.
  function look(i) { return {colour: PALETTE[i % PALETTE.length], shape: SHAPES[i % SHAPES.length]}; }

  // The marker of a series as a small SVG, so the legend shows the same shape as the plot.
  function markerSvg(i, bar) {
    const l = look(i);
    const shapes = {
      circle: '<circle cx="7" cy="7" r="4.5"/>',
      rect: '<rect x="2.5" y="2.5" width="9" height="9"/>',
      triangle: '<polygon points="7,1.5 12.5,12 1.5,12"/>',
      rectRot: '<polygon points="7,1 13,7 7,13 1,7"/>',
      star: '<path d="M7 1v12M1 7h12M2.8 2.8l8.4 8.4M11.2 2.8l-8.4 8.4" stroke-width="1.6" fill="none"/>',
      crossRot: '<path d="M2.5 2.5l9 9M11.5 2.5l-9 9" stroke-width="2" fill="none"/>',
    };
    const mark = bar ? '<rect x="1" y="3" width="12" height="8"/>' : shapes[l.shape];
    const line = bar ? "" : '<line x1="0" y1="7" x2="22" y2="7" stroke-width="2"/>';
    return '<svg width="22" height="14" viewBox="0 0 22 14" aria-hidden="true" focusable="false" stroke="' + l.colour +
      '" fill="' + l.colour + '">' + line + '<g transform="translate(4 0)">' + mark + "</g></svg>";
  }

  // The legend outside the plot: one button per series, named as the series, toggling it (keyboard: Tab, Enter/Space).
  function buildLegend(figure, chart, spec, bar, state) {
    let list = figure.querySelector(".chart-legend");
    if (!list) {
      list = document.createElement("ul");
      list.className = "chart-legend";
      list.setAttribute("aria-label", typeof gettext === "function" ? gettext("Series (click to hide or show)") : "Series");
      figure.querySelector(".chart-box").insertAdjacentElement("afterend", list);
    }
    list.innerHTML = "";
    spec.series.forEach(function (series, i) {
      const item = document.createElement("li");
      const button = document.createElement("button");
      button.type = "button";
      button.dataset.series = String(i);
      button.setAttribute("aria-pressed", state.hidden.has(i) ? "false" : "true");
      button.innerHTML = markerSvg(i, bar);
      const name = document.createElement("span");
      name.textContent = series.label;
      button.appendChild(name);
      button.addEventListener("click", function () {
        if (state.hidden.has(i)) state.hidden.delete(i); else state.hidden.add(i);
        if (bar) { if (chart.getDataVisibility(i) === state.hidden.has(i)) chart.toggleDataVisibility(i); }
        else chart.setDatasetVisibility(i, !state.hidden.has(i));
        chart.update();
        button.setAttribute("aria-pressed", state.hidden.has(i) ? "false" : "true");
      });
      item.appendChild(button);
      list.appendChild(item);
    });
  }

  function datasets(spec, metric, perCore, hidden) {
    return spec.series.map(function (series, i) {
      const l = look(i);
      return {
        label: series.label,
        borderColor: l.colour,
        backgroundColor: l.colour,
        pointStyle: l.shape,
        pointRadius: 4,
        hidden: !!(hidden && hidden.has(i)),
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
    const state = {metric: chosen ? chosen.name : spec.metrics[0].name, perCore: !!(chosen && spec.initial_per_core),
                   hidden: new Set()};
    const bar = spec.kind === "bar";
    const chart = new Chart(canvas, {
      type: bar ? "bar" : "line",
      data: bar ? bars(spec, state.metric, state.perCore) : {datasets: datasets(spec, state.metric, state.perCore, state.hidden)},
      options: {
        parsing: false, responsive: true, maintainAspectRatio: false, animation: false,
        interaction: {mode: "nearest", intersect: false},
        scales: {
          x: bar ? {type: "category"} : {type: "linear", title: {display: true, text: spec.x_label}, beginAtZero: true},
          y: {beginAtZero: true, title: {display: true, text: metricLabel(spec, state.metric, state.perCore)}},
        },
        plugins: {
          legend: {display: false},  // drawn outside the canvas by buildLegend
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
    buildLegend(figure, chart, spec, bar, state);
    figure.querySelectorAll("[data-per-core]").forEach(function (box) { box.checked = state.perCore; });
    function update() {
      if (bar) chart.data = bars(spec, state.metric, state.perCore);
      else chart.data.datasets = datasets(spec, state.metric, state.perCore, state.hidden);
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
