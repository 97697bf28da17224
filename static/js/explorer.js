// Forms marked data-drop-empty (the explorer's filters) send, and so push into the address bar, only
// the parameters that have a value: "any" and empty number fields leave no `vendor=&min_tps=` behind,
// nor the default columns (as whitepaper.explorer.canonical_query).
// The form carries hx-history="false": on Back/Forward htmx asks the server for the whole page
// (an HX-History-Restore-Request), so the controls come back with the rows they filtered.
document.addEventListener("htmx:configRequest", (event) => {
  if (!event.detail.elt.closest("form[data-drop-empty]")) return;
  const params = event.detail.parameters;
  // Another engine: the version chosen for the previous one no longer applies (the server sends the
  // new engine's versions with the rows).
  const changed = event.detail.triggeringEvent && event.detail.triggeringEvent.target;
  if (changed && changed.name === "engine") params.delete("version");
  // A version of the grouped menu (no engine chosen) names its engine: "ppas:10" is PPAS 10, not PostgreSQL 10.
  const version = params.get("version");
  if (version && version.includes(":") && !params.get("engine")) {
    const [engine, ...rest] = version.split(":");
    params.set("engine", engine);
    params.set("version", rest.join(":"));
    const form = event.detail.elt.closest("form[data-drop-empty]");
    if (form.elements.engine) form.elements.engine.value = engine;
  }
  // Another document: its default applies (a document's own rows all; otherwise the newest edition).
  if (changed && changed.name === "document") params.delete("latest");
  // The default of `latest` is what no `latest` means (as whitepaper.explorer.canonical_query).
  if (params.get("latest") === (params.get("document") ? "false" : "true")) params.delete("latest");
  for (const name of new Set([...params.keys()])) {
    const kept = params.getAll(name).filter((value) => value !== "");
    params.delete(name);
    kept.forEach((value) => params.append(name, value));
  }
  // The default columns are what no `cols` means.
  const form = event.detail.elt.closest("form[data-drop-empty]");
  if (form.dataset.defaultCols && params.getAll("cols").join(" ") === form.dataset.defaultCols) params.delete("cols");
});

// On a phone the filter form folds (its summary says how many filters are set), so the results start on the
// first screen; on a wider screen it stays open.
document.addEventListener("DOMContentLoaded", () => {
  const fold = document.getElementById("filters-fold");
  if (fold && window.matchMedia("(max-width: 600px)").matches) fold.open = false;
});

// A GET form whose values are the question the page answers (sizing; compare's "Add a series" with its metric,
// marked data-url-state) shows the question of the page on screen. Back, Forward and a restored page otherwise bring
// back what was last chosen before leaving: a TPM 100000 question over the TPS 1000 answer (issue 49.8). Its
// defaults are the values the server rendered from the URL.
window.addEventListener("pageshow", () => {
  document.querySelectorAll("form[data-url-state]").forEach((form) => form.reset());
});
