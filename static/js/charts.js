// Chart helpers (filled in by the pages work).
