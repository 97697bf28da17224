"""What the browser tests read off a page, written once."""


def rows_on_screen(page):
    """The explorer's rows on screen, as result ids in their order."""
    return page.eval_on_selector_all("#results tbody tr", "rows => rows.map(r => Number(r.dataset.result))")
