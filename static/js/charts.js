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
        clip: false,  // a marker at the largest vCPU count drawn whole (the layout's padding makes room)
        hidden: !!(hidden && hidden.has(i)),
        data: series.points.filter(function (p) { return p[metric] !== null && p[metric] !== undefined; })
          .map(function (p) {
            return {x: p.x, y: perCore ? Math.round(p[metric] / p.x * 100) / 100 : p[metric],
                    flavor: p.flavor, memory_gb: p.memory_gb, url: p.url};
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
                  vcpus: p.x, flavor: p.flavor, memory_gb: p.memory_gb, url: p.url};
        }),
      }],
    };
  }

  // The names under the bars (issue 49.6). A series' full name ("MySQL 8.0 · Dedicated · 8 vCPU / 32 GB (Huawei Cloud
  // 2025)") rotated under a narrow chart took the canvas and left no room for the bars. Under each bar: only the parts
  // of its name that tell it from the others (the parts every name shares become the axis' title), level, wrapped in
  // words to its share of the width, at most MAX_NAME_LINES lines; where that does not fit (six bars on a phone) every
  // bar is numbered and the legend, which names each series in full, numbered alike.
  const MAX_NAME_LINES = 4;
  const NAME_GAP = 6;  // pixels between the names of neighbouring bars

  function sharedParts(names) {
    const split = names.map(function (name) { return name.split(" · "); });
    return split[0].filter(function (part) {
      return split.length > 1 && split.every(function (parts) { return parts.indexOf(part) >= 0; });
    });
  }

  // Words of `text` in lines no wider than `width` (measure: text -> pixels); null when a word alone is wider.
  function wrapWords(parts, width, measure) {
    const lines = [];
    let line = "";
    parts.forEach(function (part, i) {
      part.split(" ").forEach(function (word, j) {
        const glue = line ? (j === 0 && i > 0 ? " · " : " ") : "";
        if (line && measure(line + glue + word) <= width) { line += glue + word; return; }
        if (line) lines.push(line + (j === 0 && i > 0 ? " ·" : ""));
        line = word;
      });
    });
    if (line) lines.push(line);
    return lines.every(function (l) { return measure(l) <= width; }) ? lines : null;
  }

  // The names under the bars for a scale `width` pixels wide: [[line, ...], ...], or numbers (numbered: true).
  function barNames(names, width, font) {
    const shared = sharedParts(names);
    const ctx = barNames.ctx || (barNames.ctx = document.createElement("canvas").getContext("2d"));
    ctx.font = font;
    const measure = function (text) { return ctx.measureText(text).width; };
    const room = width / names.length - NAME_GAP;
    const lines = names.map(function (name) {
      const own = name.split(" · ").filter(function (part) { return shared.indexOf(part) < 0; });
      return wrapWords(own.length ? own : [name], room, measure);
    });
    if (lines.every(function (l) { return l && l.length <= MAX_NAME_LINES; })) return {lines: lines, shared: shared, numbered: false};
    return {lines: names.map(function (_, i) { return [String(i + 1)]; }), shared: shared, numbered: true};
  }

  // A bar chart's x scale: level names, all of them (wrapped to fit: barNames), never rotated over the plot nor skipped.
  function barScale(figure, names) {
    const shared = sharedParts(names).join(" · ");
    return {
      type: "category",
      title: {display: !!shared, text: shared},
      ticks: {autoSkip: false, maxRotation: 0, minRotation: 0, callback: function (value, index) {
        const key = this.chart.data.labels.join("\n") + "|" + Math.round(this.width);
        if (this.perfdashNamesKey !== key) {
          this.perfdashNamesKey = key;
          this.perfdashNames = barNames(this.chart.data.labels, this.width, Chart.helpers.toFont(this.options.ticks.font).string);
          numberLegend(figure, this.perfdashNames.numbered);
        }
        return this.perfdashNames.lines[index];
      }},
    };
  }

  // Bars named by number: the legend numbers its entries alike (CSS counters: the entries' text stays the names).
  function numberLegend(figure, numbered) {
    const legend = figure.querySelector(".chart-legend");
    if (legend) legend.classList.toggle("numbered", numbered);
  }

  function metricLabel(spec, metric, perCore) {
    const m = spec.metrics.find(function (m) { return m.name === metric; });
    return (m ? m.label : metric) + (perCore ? " " + spec.per_core_label : "");
  }

  // The y axis names the metric and its unit ("TPS (transactions per second)"), built by whitepaper/charts.py.
  function axisLabel(spec, metric, perCore) {
    const m = spec.metrics.find(function (m) { return m.name === metric; });
    return m ? (perCore ? m.axis_per_core : m.axis) : metric;
  }

  // A tooltip's lines: on a narrow chart (a phone) each part on its own line, so the box fits the chart.
  // Without a point (raw null): the name's lines only.
  function tooltipLines(name, raw, x, spec, narrow) {
    const value = raw ? raw.y.toLocaleString() : "";
    const size = raw ? x + " " + spec.x_label + " / " + raw.memory_gb + " GB" : "";
    if (!narrow) return (name ? name + ": " : "") + value + " @ " + size + (raw.flavor ? " (" + raw.flavor + ")" : "");
    const lines = [];
    // a long series name wraps at about 34 characters a line
    (name || "").split(" · ").forEach(function (part) {
      const last = lines.length - 1;
      if (last >= 0 && (lines[last] + " · " + part).length <= 34) lines[last] += " · " + part; else lines.push(part);
    });
    if (!raw) return lines;
    lines.push(value, "@ " + size);
    if (raw.flavor) lines.push(raw.flavor);
    return lines.filter(function (l) { return l; });
  }

  // Charts are transparent; their PNG gets the page's white behind it.
  const whiteBackground = {
    id: "perfdashWhiteBackground",
    beforeDraw: function (chart) {
      const ctx = chart.ctx;
      ctx.save();
      ctx.globalCompositeOperation = "destination-over";
      ctx.fillStyle = "#fff";
      ctx.fillRect(0, 0, chart.width, chart.height);
      ctx.restore();
    },
  };

  function downloadPng(figure, chart) {
    const link = document.createElement("a");
    link.href = chart.toBase64Image("image/png");
    link.download = figure.dataset.chart + ".png";
    document.body.appendChild(link);
    link.click();
    link.remove();
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
      plugins: [whiteBackground],
      options: {
        parsing: false, responsive: true, maintainAspectRatio: false, animation: false,
        interaction: {mode: "nearest", intersect: false},
        layout: {padding: {top: 8, right: 10}},  // room for the markers drawn unclipped at the plot's edge
        scales: {
          x: bar ? barScale(figure, spec.series.map(function (s) { return s.label; })) : {type: "linear", title: {display: true, text: spec.x_label}, beginAtZero: true},
          y: {beginAtZero: true, title: {display: true, text: axisLabel(spec, state.metric, state.perCore)}},
        },
        // A point (a bar) opens its flavour's page (/flavors/<id>/); the chart's data table links there too.
        onClick: function (event, elements) {
          const hit = chart.getElementsAtEventForMode(event, "nearest", {intersect: true}, false)[0];
          const raw = hit && chart.data.datasets[hit.datasetIndex].data[hit.index];
          if (raw && raw.url) window.location.assign(raw.url);
        },
        onHover: function (event) {
          const hit = chart.getElementsAtEventForMode(event, "nearest", {intersect: true}, false).length;
          event.native.target.style.cursor = hit ? "pointer" : "";
        },
        plugins: {
          legend: {display: false},  // drawn outside the canvas by buildLegend
          tooltip: {callbacks: {title: function (items) {
            // a bar's full name (its own title), wrapped on a narrow chart like a line's name
            const name = items.length ? String(items[0].label) : "";
            return bar && chart.width < 520 ? tooltipLines(name, null, null, spec, true) : name;
          }, label: function (ctx) {
            const raw = ctx.raw;
            const narrow = chart.width < 520;
            return tooltipLines(bar ? "" : ctx.dataset.label, raw, bar ? raw.vcpus : raw.x, spec, narrow);
          }}},
        },
      },
    });
    charts.set(id, chart);
    buildLegend(figure, chart, spec, bar, state);
    if (bar) numberLegend(figure, !!(chart.scales.x.perfdashNames && chart.scales.x.perfdashNames.numbered));
    figure.querySelectorAll("[data-per-core]").forEach(function (box) { box.checked = state.perCore; });
    function update() {
      if (bar) chart.data = bars(spec, state.metric, state.perCore);
      else chart.data.datasets = datasets(spec, state.metric, state.perCore, state.hidden);
      chart.options.scales.y.title.text = axisLabel(spec, state.metric, state.perCore);
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
    figure.querySelectorAll("[data-download-png]").forEach(function (button) {
      button.closest(".chart-tools").hidden = false;  // drawn: the PNG and the point links work
      button.addEventListener("click", function () { downloadPng(figure, chart); });
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
