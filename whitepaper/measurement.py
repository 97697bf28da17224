"""The typed reading of an internal row's context (PublishedResult.measurement, issue 51.4): what a published
row carries about the run(s) behind it. runs/publish.py writes one (through whitepaper.internal); the pages, the
CSV and the API read its attributes, never the JSON's keys. Pure: no Django."""

from dataclasses import dataclass

# Measurement's fields in the order the JSON has always carried them; `capacity` only when a search found one.
_KEYS = ("run", "client_bound", "client_bound_cause", "other_load", "latency_caveat", "n", "tps_ci", "repeats",
         "stability", "disturbed")


@dataclass(frozen=True)
class Measurement:
    """What an internal row carries about the run(s) behind it (PublishedResult.measurement). The nested values are
    kept as the JSON holds them (the API shows them as they are): other_load {steps, acknowledged, acknowledged_by;
    an edition's row also runs}, disturbed {runs, acknowledged, acknowledged_by}, tps_ci {low, high, n, cv, method},
    repeats (history.group_spread), stability (one run's own TPS interval), capacity (what a capacity search found
    beside its sustained rate)."""

    run: int | None = None
    client_bound: bool | None = None
    client_bound_cause: str | None = None
    other_load: dict | None = None
    latency_caveat: str = ""
    n: int | None = None
    tps_ci: dict | None = None
    repeats: dict | None = None
    stability: dict | None = None
    disturbed: dict | None = None
    capacity: dict | None = None

    @classmethod
    def from_json(cls, data):
        """The stored JSON read; None for a vendor's row (an empty measurement)."""
        if not data:
            return None
        return cls(**{k: data.get(k) for k in (*_KEYS, "capacity")} | {"latency_caveat": data.get("latency_caveat") or ""})

    def to_json(self):
        data = {k: getattr(self, k) for k in _KEYS}
        if self.capacity is not None:
            data["capacity"] = self.capacity
        return data

    @property
    def tps_interval(self):
        """(low, high) of TPS's 95 % interval over the series' runs; (None, None) with one run."""
        ci = self.tps_ci or {}
        return ci.get("low"), ci.get("high")

    @property
    def runs_n(self):
        """How many runs the row's figures are the mean of (1: a single run)."""
        return self.n or (self.repeats or {}).get("n") or (1 if self.run else None)

    @property
    def tps_cv(self):
        """TPS's coefficient of variation over the series' runs; None with one run."""
        return (self.repeats or {}).get("cv")

    @property
    def repeats_stdev(self):
        return (self.repeats or {}).get("stdev")
