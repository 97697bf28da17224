// The language switch keeps the reader on the same view: htmx may have changed the URL (explorer
// filters) since the page was rendered, so the link is rebuilt from the address bar when clicked.
document.addEventListener("click", (event) => {
  const link = event.target.closest("a[data-lang]");
  if (!link) return;
  const url = new URL(window.location.href);
  url.searchParams.set("lang", link.dataset.lang);
  event.preventDefault();
  window.location.assign(url.toString());
});
