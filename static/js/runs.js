// Run page: live chart of the run's samples, fetched incrementally from the API (?after=<last id>).
(function () {
  "use strict";
  function init() {
    var canvas = document.getElementById("run-chart");
    if (!canvas || !window.Chart) return;
    var url = canvas.dataset.samplesUrl;
    // Interface text from Django's JavaScript catalogue (base.html), English when it is missing.
    var gettext = window.gettext || function (s) { return s; };
    var interpolate = window.interpolate || function (s, args) { return s.replace("%s", args[0]); };
    var after = 0;
    var chart = new Chart(canvas, {
      type: "line",
      data: { labels: [], datasets: [
        { label: "TPS", data: [], yAxisID: "y", borderWidth: 2, pointRadius: 0 },
        { label: "QPS", data: [], yAxisID: "y", borderWidth: 1, pointRadius: 0, hidden: false },
        { label: gettext("p95 latency (ms)"), data: [], yAxisID: "y1", borderWidth: 1, borderDash: [4, 3], pointRadius: 0 }
      ] },
      options: { animation: false, responsive: true, maintainAspectRatio: false, interaction: { mode: "index", intersect: false },
        scales: { y: { beginAtZero: true, title: { display: true, text: gettext("per second") } },
                  y1: { beginAtZero: true, position: "right", grid: { drawOnChartArea: false }, title: { display: true, text: "ms" } } } }
    });
    var count = document.getElementById("sample-count");
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
            if (s.warmup) return;
            chart.data.labels.push((s.step > 1 ? "#" + s.step + " " : "") + interpolate(gettext("%s thr"), [s.threads]) + " " + s.t + "s");
            chart.data.datasets[0].data.push(s.tps);
            chart.data.datasets[1].data.push(s.qps);
            chart.data.datasets[2].data.push(s.latency_p95_ms !== null ? s.latency_p95_ms : s.latency_avg_ms);
            after = Math.max(after, s.id);
          });
          if (body.results.length) chart.update();
          if (count) count.textContent = interpolate(gettext("%s samples"), [chart.data.labels.length]);
          canvas.dataset.samples = String(chart.data.labels.length);
          if (!finalBefore || body.results.length) setTimeout(poll, 1000);
        })
        .catch(function () { setTimeout(poll, 3000); });
    }
    poll();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})();
