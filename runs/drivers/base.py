"""What every tool driver shares: where the tool connects, a step of its plan, TLS file names and
libpq's TLS settings, masking secrets, and the one rule that judges an ended step (runs/drivers/__init__.py
says what a driver provides)."""

import re
from dataclasses import dataclass, field

from .parameters import COMMON, argv_problems

# What a tool may be given as a host, a database or a user (the target's form validates with the same patterns):
# host names (RFC 1123 labels) and IPv4/IPv6 literals, SQL identifiers; nothing a tool could read as an option.
HOST_RE = re.compile(
    r"^(?=.{1,253}$)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$"
    r"|^[0-9A-Fa-f:]{2,39}$"
)
IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]{0,62}$")
ENGINES = ("mysql", "postgresql")
TLS_MODE_NAMES = ("disable", "require", "verify-ca", "verify-full")

# The files a tool reads its TLS material from, in the run's work directory: Debian's sysbench 1.0.20 loads
# exactly these names from its working directory (--mysql-ssl=on has no path options); libpq is pointed at them.
CA_FILE, CERT_FILE, KEY_FILE = "cacert.pem", "client-cert.pem", "client-key.pem"


@dataclass(frozen=True)
class Connection:
    """Where the tool connects; the password travels separately (secret_files / secret_env)."""

    engine: str  # "mysql" | "postgresql"
    host: str
    port: int
    database: str
    user: str
    tls_mode: str = "disable"  # libpq's names: disable | require | verify-ca | verify-full (runs/access.py)

    def __post_init__(self):
        # Every value here reaches a tool's argv or config: checked at this last gate too, whatever was stored.
        problems = []
        if self.engine not in ENGINES:
            problems.append("engine")
        if not isinstance(self.host, str) or not HOST_RE.match(self.host):
            problems.append("host")
        if isinstance(self.port, bool) or not isinstance(self.port, int) or not 1 <= self.port <= 65535:
            problems.append("port")
        for name in ("database", "user"):
            if not isinstance(getattr(self, name), str) or not IDENT_RE.match(getattr(self, name)):
                problems.append(name)
        if self.tls_mode not in TLS_MODE_NAMES:
            problems.append("tls_mode")
        if problems:
            raise BadArgument(f"The target's {', '.join(problems)} cannot be given to a tool: "
                              "not a host name, address, port or identifier. Correct the target.")


@dataclass(frozen=True)
class Step:
    phase: str  # "prepare" | "warmup" | "run" | "cleanup"
    argv: list = field(default_factory=list)
    threads: int | None = None
    duration_s: int = 0  # expected running time; the runner adds a margin for its time limit
    index: int = 0  # 1-based step number of the thread sweep for run/warmup
    log_prefix: str = ""  # a latency log the tool writes into the workdir (pgbench -l): <prefix>.*


def libpq_tls_env(tls, workdir):
    """libpq's TLS settings (pgbench, sysbench's pgsql driver): the mode always (libpq's own default, prefer,
    would decide for us), the files written into the work directory (runs/access.py names them)."""
    env = {"PGSSLMODE": tls.mode}
    files = tls.files()
    if CA_FILE in files:
        env["PGSSLROOTCERT"] = f"{workdir}/{CA_FILE}"
    if CERT_FILE in files and KEY_FILE in files:
        env.update(PGSSLCERT=f"{workdir}/{CERT_FILE}", PGSSLKEY=f"{workdir}/{KEY_FILE}")
    return env


def libpq_tls_files(tls):
    return tls.files() if tls.on else {}


class NotRunnable(Exception):
    """The tool cannot run on these workers (HammerDB), or cannot run what it was asked to (a workload it does
    not bundle)."""


class BadArgument(NotRunnable):
    """A value that would reach a tool's argv is not of its kind (a stored target that bypassed validation)."""


def checked_params(params, own=()):
    """The run's parameters if every one is of its kind and within its limits (the common ones and the tool's `own`
    declarations: runs/drivers/parameters.py), else BadArgument."""
    bad = argv_problems(params, {p.name: p for p in (*COMMON, *own)})
    if bad:
        raise BadArgument(f"The run's parameter(s) {', '.join(bad)} are not whole numbers within their limits; "
                          "launch the run again.")
    return params


def checked_workload(allowed, workload):
    """The workload if it is one of `allowed` (a driver's WORKLOADS: what the tool bundles or the project ships), else NotRunnable:
    a path or any other name would be read by the tool as a script of its own (sysbench runs Lua, os.execute
    included) or as an option."""
    if workload not in allowed:
        raise NotRunnable(f"Workload {str(workload)[:60]!r} is not one this tool runs: choose one of {', '.join(allowed)}.")
    return workload


MASK = "********"
# Where a password is really written: a key's value (password=…, PGPASSWORD=…, --mysql-password=…, pwd: …),
# quoted or not, and a URL's user:password@. The whole value is masked whatever it is, so its shape is not told.
_KEYED_VALUE = re.compile(
    r"""(?ix) ( (?<![a-z0-9_])(?:--)?[a-z_-]*?(?:password|passwd|pwd)\s*[=:]\s* )
        ( '(?:[^'\\]|\\.)*' | "(?:[^"\\]|\\.)*" | [^\s'",;)]+ )""")
_URL_USERINFO = re.compile(r"(?i)([a-z][a-z0-9+.-]*://[^/\s:@]*:)([^@\s/]+)(@)")
# A secret written elsewhere (a tool echoing it) is masked only when it cannot be an ordinary token of a
# message: masking "server" or "x" inside "Is the server running" or "nonexistent" would reveal the password
# by the shape of what was masked.
_DISTINCTIVE_MIN_LENGTH = 8


def _is_distinctive(secret):
    return len(secret) >= _DISTINCTIVE_MIN_LENGTH and not secret.isalpha()


def redact(text, secrets):
    """Mask secrets where they are really written (keyed values, URL credentials, and a distinctive secret
    as a whole token), never inside ordinary words (command lines, logs, reasons)."""
    for secret in secrets:  # first, while a secret with a comma or a space is still whole
        if secret and _is_distinctive(secret):
            token = re.compile(r"(?<![\w])" + re.escape(secret) + r"(?![\w])")
            text = token.sub(MASK, text)
    text = _KEYED_VALUE.sub(lambda m: m.group(1) + MASK, text)
    return _URL_USERINFO.sub(lambda m: m.group(1) + MASK + m.group(3), text)


def judge_step(driver, step, outcome, limit_s, secrets, host=""):
    """Why a tool step that ended (not cancelled) failed, and the final report of a run step: (reason, summary),
    reason "" when it ran to its report. One rule for one-client runs and each client of a multi-client run
    (host: the client's, named in its reasons)."""
    on = f" on {host}" if host else ""
    if outcome.stopped == "timeout":
        threads = f" with {step.threads} threads" if step.threads and not host else ""  # prepare, cleanup: none
        return f"{step.phase} step{threads} exceeded its time limit ({limit_s} s); the tool was stopped.", {}
    if outcome.returncode is not None and outcome.returncode < 0:  # killed by a signal we did not send
        return redact(f"{step.phase} failed{on}: {crash_reason(driver, outcome)}", secrets), {}
    if outcome.returncode != 0:
        why = driver.failure_reason(outcome.stdout, outcome.stderr) or f"exit status {outcome.returncode}"
        return redact(f"{step.phase} failed{on}: {why}", secrets), {}
    if step.phase != "run":
        return "", {}
    summary = driver.parse_summary(outcome.stdout, outcome.stderr)
    if not summary.get("tps") and summary.get("tps") != 0:
        return f"{step.phase} step printed no final report{on}", summary
    return "", summary


def crash_reason(driver, outcome):
    """A tool killed by a signal (sysbench on PostgreSQL dies of SIGSEGV when the server goes): the signal and its
    last error line, or its last line when it printed no error ("sysbench crashed (signal 11) after: FATAL: ...")."""
    streams = [("stderr", outcome.stderr), ("stdout", outcome.stdout)]
    lines = [(name, ln.strip()) for name, text in streams for ln in (text or "").splitlines() if ln.strip()]
    errors = [ln for name, ln in lines if driver.is_error_line(ln, name)]
    last = errors[-1] if errors else (lines[-1][1] if lines else "")
    binary = getattr(driver, "BINARY", "the tool")
    return f"{binary} crashed (signal {-outcome.returncode})" + (f" after: {last[:500]}" if last else " before any output")


def to_float(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def statements_per_transaction(summary):
    """The SQL statements a run counted per transaction: what the driver stated (pgbench: its script's commands), else
    the tool's own queries / transactions (sysbench oltp_read_write 20 with BEGIN and COMMIT, oltp_point_select 1);
    None without both counts. The published row's QPS definition (whitepaper: QPS = TPS x this)."""
    stated = summary.get("statements_per_transaction")
    if stated:
        return stated
    queries, transactions = summary.get("queries"), summary.get("transactions")
    return round(queries / transactions) if queries is not None and transactions else None
