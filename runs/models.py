"""Benchmark targets, profiles, runs and their samples. The database row is the source of truth:
workers move a run through its states with conditional updates (see Run.transition), so a web
request cancelling a run and a worker finishing it can never overwrite each other."""

import ipaddress
import re
from datetime import timedelta
from functools import cached_property

from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat, load_pem_private_key
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import IntegrityError, models, transaction
from django.db.models import Exists, Q
from django.db.models.signals import post_delete
from django.dispatch import receiver
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django_celery_beat.models import PeriodicTask

from whitepaper.choices import NOT_STATED_MARK

from . import crypto
from .addresses import names_unspecified, server_address
from .cron import schedule_errors
from .dispatch import unconsumed
from .drivers import RUNNABLE_TOOLS, TOOL_CHOICES, get_driver, workloads
from .footprint import duration_text
from .drivers.base import HOST_RE, IDENT_RE
from .insight import other_load as steps_with_other_load
from .params import expected_seconds, is_capacity, is_open_loop, profile_errors, profile_values, resolve_params, typed_overrides

# A launch may ask for this many runs of one set-up at most (they queue one after another on the target).
MAX_REPEATS = 30  # runs of one set-up in one launch (a series)
# An interleaved comparison (runs/services.py launch_interleaved): 2 to 6 set-ups, 5 runs each unless asked otherwise.
MIN_INTERLEAVED, MAX_INTERLEAVED, DEFAULT_INTERLEAVED_REPEATS = 2, 6, 5

# Hostnames (RFC 1123 labels) and IPv4/IPv6 literals only, identifiers: nothing a tool could read as an option
# (the drivers check the same patterns again before a value reaches a tool: runs/drivers/base.Connection).

validate_host = RegexValidator(HOST_RE, _("Enter a hostname or an IP address (letters, digits, dots, hyphens; no spaces or shell characters)."))
validate_identifier = RegexValidator(IDENT_RE, _("Use letters, digits, _ or $, starting with a letter or _ (at most 63 characters)."))


# Managed databases cap passwords far below this (MySQL 32 characters of user names, PostgreSQL none but
# libpq lines of a few KB); longer is a paste gone wrong, and would be encrypted and sent on every run.
MAX_PASSWORD_LENGTH = 256


def validate_password(value):
    if len(value) > MAX_PASSWORD_LENGTH:
        raise ValidationError(_("The password may have at most %(max)d characters (it has %(n)d)."),
                              params={"max": MAX_PASSWORD_LENGTH, "n": len(value)}, code="max_length")
    if any(c in value for c in '"\r\n\x00'):
        raise ValidationError(_("The password may not contain double quotes, line breaks or NUL characters "
                                "(sysbench reads it from a config file that cannot carry them)."))
    if value != value.strip():
        raise ValidationError(_("The password may not start or end with spaces."))


TLS_MODES = [("disable", _("disable: no TLS")), ("require", _("require: encrypted, certificate not checked")),
             ("verify-ca", _("verify-ca: encrypted, chain checked against the CA")),
             ("verify-full", _("verify-full: encrypted, chain and host name checked"))]
PEM_BLOCK_RE = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----")


def _pem_kinds(value):
    return set(PEM_BLOCK_RE.findall(value))


def validate_certificate_pem(value):
    """One or more PEM certificates that parse; a private key pasted by mistake is refused, never stored."""
    if not value.strip():
        return
    if any("PRIVATE KEY" in kind for kind in _pem_kinds(value)):
        raise ValidationError(_("This is a private key, not a certificate: it was not stored. Paste the certificate "
                                "(-----BEGIN CERTIFICATE-----)."), code="private_key")
    try:
        certificates = x509.load_pem_x509_certificates(value.encode())
    except ValueError:
        certificates = []
    if not certificates or _pem_kinds(value) != {"CERTIFICATE"}:
        raise ValidationError(_("Not a PEM certificate: expected one or more -----BEGIN CERTIFICATE----- blocks that parse."),
                              code="invalid_pem")


def validate_client_key_pem(value):
    """A PEM private key without a passphrase (the tools cannot ask for one)."""
    if not value.strip():
        return
    try:
        load_pem_private_key(value.encode(), password=None)
    except TypeError:
        raise ValidationError(_("The client key is encrypted with a passphrase; the tools cannot read it. Give it "
                                "without one (it is stored encrypted)."), code="encrypted_key") from None
    except ValueError:
        raise ValidationError(_("Not a PEM private key (-----BEGIN PRIVATE KEY----- or RSA/EC PRIVATE KEY)."),
                              code="invalid_key") from None


class Engine(models.TextChoices):
    MYSQL = "mysql", _("MySQL / MariaDB")
    POSTGRESQL = "postgresql", _("PostgreSQL")
    SQLSERVER = "sqlserver", _("SQL Server")


# The tools, from the drivers (runs/drivers: DRIVERS is the one list): Tool.SYSBENCH, Tool.PGBENCH, Tool.HAMMERDB ...
Tool = models.TextChoices("Tool", [(name.upper(), (name, label)) for name, label in TOOL_CHOICES])


def reserved_queues():
    """The queues of the housekeeping tasks (the scheduler's runs.scheduled_run, the reconciler): a benchmark
    there would occupy the worker they need for up to a day."""
    routes = settings.CELERY_TASK_ROUTES
    return {settings.CELERY_TASK_DEFAULT_QUEUE} | {r["queue"] for task, r in routes.items() if task != "runs.run_benchmark"}


def validate_queue(value):
    if value in reserved_queues():
        raise ValidationError(_("The queue %(queue)s is reserved for the scheduler and the reconciler; name the "
                                "benchmark clients' queue (e.g. benchmarks)."), params={"queue": value}, code="reserved")


def host_refusal(host):
    """Why a host that names an unspecified address may not be a target's (runs/addresses.py)."""
    return _("%(host)s is an unspecified address (0.0.0.0 or ::): it names no server, and a client given it reaches "
             "this host. Write the server's own address or name (127.0.0.1 for a server on this host).") % {"host": host}


class TargetQuerySet(models.QuerySet):
    def usable(self):
        """Targets that may take new runs (not archived)."""
        return self.filter(archived_at__isnull=True)


class Target(models.Model):
    name = models.CharField(_("name"), max_length=100, unique=True)
    engine = models.CharField(_("engine"), max_length=20, choices=Engine.choices[:2])
    host = models.CharField(_("host"), max_length=253, validators=[validate_host])
    port = models.PositiveIntegerField(_("port"), validators=[MinValueValidator(1), MaxValueValidator(65535)])
    database = models.CharField(_("database"), max_length=63, validators=[validate_identifier])
    user = models.CharField(_("user"), max_length=63, validators=[validate_identifier])
    password_encrypted = models.TextField(blank=True, editable=False)
    # TLS (runs/access.py says what each mode verifies with each tool).
    tls_mode = models.CharField(_("TLS mode"), max_length=20, choices=TLS_MODES, default="disable")
    tls_ca = models.TextField(_("CA certificate (PEM)"), blank=True, validators=[validate_certificate_pem],
                              help_text=_("The vendor's CA certificate; needed for verify-ca and verify-full."))
    tls_cert = models.TextField(_("client certificate (PEM)"), blank=True, validators=[validate_certificate_pem],
                                help_text=_("Optional; with its key. sysbench against MySQL needs one."))
    tls_key_encrypted = models.TextField(blank=True, editable=False)
    server_version = models.CharField(_("server version"), max_length=200, blank=True,
                                      help_text=_("Read from the server by 'test connection'."))
    version_checked_at = models.DateTimeField(null=True, blank=True)
    family = models.CharField(_("family"), max_length=60, blank=True, help_text=_("e.g. general, dedicated."))
    vcpus = models.PositiveIntegerField(_("vCPUs"), null=True, blank=True, validators=[MinValueValidator(1), MaxValueValidator(4096)])
    memory_gb = models.PositiveIntegerField(_("memory (GB)"), null=True, blank=True, validators=[MinValueValidator(1), MaxValueValidator(65536)])
    flavor = models.ForeignKey("whitepaper.Flavor", on_delete=models.SET_NULL, null=True, blank=True,
                               related_name="targets", verbose_name=_("catalogue flavour"))
    queue = models.CharField(_("client pool queue"), max_length=60, default="benchmarks",
                             validators=[RegexValidator(r"^[a-z0-9][a-z0-9._-]{0,59}$", _("Lower-case letters, digits, . _ -")),
                                         validate_queue],
                             help_text=_("Celery queue of the benchmark clients that reach this target (e.g. same zone)."))
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    archived_at = models.DateTimeField(_("archived"), null=True, blank=True,
                                       help_text=_("Archived targets take no new runs; their runs stay."))

    objects = TargetQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    def get_absolute_url(self):
        return reverse("runs:target-edit", args=[self.pk])

    @property
    def password(self):
        return crypto.decrypt(self.password_encrypted)

    def set_password(self, raw):
        validate_password(raw)
        self.password_encrypted = crypto.encrypt(raw)

    @property
    def tls_key(self):
        return crypto.decrypt(self.tls_key_encrypted)

    def set_tls_key(self, raw):
        validate_client_key_pem(raw)
        self.tls_key_encrypted = crypto.encrypt(raw)

    @property
    def has_tls_key(self):
        return bool(self.tls_key_encrypted)

    def clean(self):
        super().clean()
        errors = {}
        if self.host and names_unspecified(self.host, self.port or 0):
            errors["host"] = [host_refusal(self.host)]
        if self.tls_mode in ("verify-ca", "verify-full") and not self.tls_ca.strip():
            errors["tls_ca"] = [_("TLS mode %(mode)s checks the server's certificate against a CA certificate: upload it.")
                                % {"mode": self.tls_mode}]
        if bool(self.tls_cert.strip()) != self.has_tls_key:
            errors["tls_key" if self.tls_cert.strip() else "tls_cert"] = [
                _("A client certificate and its key go together: give both or neither.")]
        elif self.tls_cert.strip() and self.has_tls_key:
            try:
                cert = x509.load_pem_x509_certificates(self.tls_cert.encode())[0]
                key = load_pem_private_key(self.tls_key.encode(), password=None)
            except (ValueError, TypeError):
                # Not a certificate (a private key pasted there) or not a key: the field's own validator says so
                # (clean() runs after the fields' validators, whatever they found).
                cert = key = None
            der = (Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
            if cert is not None and cert.public_key().public_bytes(*der) != key.public_key().public_bytes(*der):
                errors["tls_key"] = [_("The client key does not belong to the client certificate.")]
        if errors:
            raise ValidationError(errors)

    def database_key(self):
        """Which server and database this entry names, whatever it calls them: the engine, the server's address
        (runs/addresses.py: every spelling of this host is one, 127.0.0.1; another host's name its first address),
        the port and the database. Two runs never share it at once (Run's one_active_run_per_database): each run's
        set-up drops the tables the other uses."""
        return "|".join([self.engine, server_address(self.host, self.port), str(self.port), self.database])

    @property
    def has_password(self):
        return bool(self.password_encrypted)

    # The size the target declares: its own numbers, else its catalogue flavour's.
    @property
    def declared_vcpus(self):
        return self.vcpus or (self.flavor.vcpus if self.flavor_id else None)

    @property
    def declared_memory_gb(self):
        return self.memory_gb or (self.flavor.memory_gb if self.flavor_id else None)


class BenchmarkProfile(models.Model):
    """A benchmark as a methodology describes it; a run may override its numbers within limits."""

    slug = models.SlugField(max_length=80, unique=True)
    name = models.CharField(_("name"), max_length=200)
    tool = models.CharField(_("tool"), max_length=20, choices=Tool.choices)
    engine = models.CharField(_("engine"), max_length=20, choices=Engine.choices)
    workload = models.CharField(_("workload"), max_length=40,
                                help_text=_("sysbench: oltp_read_write; pgbench: ro, rw (Alibaba scripts) or tpcb (built-in)."))
    quick = models.BooleanField(_("quick variant"), default=False, help_text=_("Seconds and small tables, for smoke runs."))
    tables = models.PositiveIntegerField(null=True, blank=True)
    rows_per_table = models.PositiveBigIntegerField(null=True, blank=True)
    scale = models.PositiveIntegerField(null=True, blank=True, help_text=_("pgbench scale factor."))
    range = models.PositiveBigIntegerField(null=True, blank=True, help_text=_("pgbench :range of the gaussian aid (hot rows)."))
    threads = models.PositiveIntegerField(default=8, help_text=_("sysbench threads / pgbench clients (-c)."))
    jobs = models.PositiveIntegerField(null=True, blank=True, help_text=_("pgbench -j; empty means equal to clients."))
    thread_sweep = models.JSONField(default=list, blank=True, help_text=_("e.g. [8, 16, 32, 64, 128]: one step per count."))
    duration_s = models.PositiveIntegerField(default=60)
    report_interval_s = models.PositiveIntegerField(default=1)
    warmup_s = models.PositiveIntegerField(default=0)
    prepared = models.BooleanField(_("prepared statements"), default=True,
                                   help_text=_("pgbench -M prepared / sysbench --db-ps-mode=auto (off: disable)."))
    methodology = models.ForeignKey("whitepaper.Methodology", on_delete=models.SET_NULL, null=True, blank=True, related_name="profiles")
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["tool", "engine", "quick", "name"]

    def __str__(self):
        return self.name

    @property
    def runnable(self):
        return self.tool in RUNNABLE_TOOLS

    def workload_refusal(self):
        """Why this profile's workload may not run ("" when it may): only the named workloads the tool bundles or
        the project ships (runs/drivers: each driver's WORKLOADS). Anything else (a path, an option, an unknown
        name) the tool would read as a script of its own to run, or as an option."""
        allowed = workloads(self.tool)
        if self.workload in allowed:
            return ""
        return _("%(workload)s is not a workload %(tool)s runs here: choose one of %(allowed)s (a path, an option or "
                 "another name is refused: the tool would run it as its script).") % {
            "workload": repr(str(self.workload)[:60]), "tool": self.tool, "allowed": ", ".join(allowed) or NOT_STATED_MARK}

    def clean(self):
        """The workload, then each parameter with a launch's own rules and limits (runs/params.py: profile_errors),
        so the admin, the API and the page refuse what no launch could run, naming the field."""
        super().clean()
        errors = {}
        why = self.workload_refusal()
        if why:
            errors["workload"] = why
        errors.update(profile_errors(self))
        if errors:
            raise ValidationError(errors)
        self.thread_sweep = profile_values(self)[0]["thread_sweep"]  # stored typed: [8, 16], never ["8", "16"]

    def resolve(self, overrides):
        """The parameters of a run: the profile's, with the overrides validated. Raises ValidationError
        naming each bad field; unknown fields are refused, not ignored."""
        return resolve_params(self, overrides)


class RunState(models.TextChoices):
    QUEUED = "queued", _("queued")
    PREPARING = "preparing", _("preparing")
    RUNNING = "running", _("running")
    CLEANING_UP = "cleaning_up", _("cleaning up")
    SUCCEEDED = "succeeded", _("succeeded")
    FAILED = "failed", _("failed")
    CANCELLED = "cancelled", _("cancelled")


ACTIVE_STATES = [RunState.PREPARING, RunState.RUNNING, RunState.CLEANING_UP]
FINAL_STATES = [RunState.SUCCEEDED, RunState.FAILED, RunState.CANCELLED]
# Which state may follow which: the only moves a worker, a user or the reconciler can make.
TRANSITIONS = {
    RunState.QUEUED: {RunState.PREPARING, RunState.CANCELLED, RunState.FAILED},
    RunState.PREPARING: {RunState.RUNNING, RunState.CLEANING_UP, RunState.FAILED, RunState.CANCELLED},
    RunState.RUNNING: {RunState.CLEANING_UP, RunState.FAILED, RunState.CANCELLED},
    RunState.CLEANING_UP: {RunState.SUCCEEDED, RunState.FAILED, RunState.CANCELLED},
}


class RunQuerySet(models.QuerySet):
    def active(self):
        return self.filter(state__in=ACTIVE_STATES)

    def for_list(self):
        return self.select_related("target", "profile", "requested_by", "repeat_group")

    def regression_results(self):
        """The runs judged regressions, one per result: a repeat group's members share its verdict, so only
        its first flagged member stands for it (runs/history.py)."""
        flagged_sibling = Run.objects.filter(repeat_group=models.OuterRef("repeat_group"), regression=True,
                                             pk__lt=models.OuterRef("pk"))
        return self.filter(regression=True).exclude(models.Exists(flagged_sibling))


class RepeatGroup(models.Model):
    """The runs of one launch that asked for N repeats of the same set-up: N ordinary runs, queued together
    (one at a time on the target), counted as one result, their mean TPS, by the history (runs/history.py)."""

    count = models.PositiveIntegerField(help_text=_("How many runs were launched together."))
    created_at = models.DateTimeField(auto_now_add=True)
    # An interleaved comparison's groups share its launch (a random id) and keep their place in it (0: the baseline).
    launch = models.CharField(max_length=32, blank=True, default="", db_index=True,
                              help_text=_("The interleaved comparison this group was launched in, if any."))
    position = models.PositiveSmallIntegerField(null=True, blank=True, help_text=_("Its set-up's place in that launch (0: the baseline)."))

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"repeat group {self.pk} ({self.count} runs)"


class Run(models.Model):
    target = models.ForeignKey(Target, on_delete=models.PROTECT, related_name="runs")
    # Target.database_key() when the run was created: the exclusion (and the queue's order) is per server and
    # database, whichever target entry names it.
    database_key = models.CharField(max_length=400, editable=False, default="", db_index=True)
    profile = models.ForeignKey(BenchmarkProfile, on_delete=models.PROTECT, related_name="runs")
    overrides = models.JSONField(default=dict, blank=True)
    params = models.JSONField(default=dict, help_text=_("The profile's parameters with the overrides applied."))
    state = models.CharField(max_length=20, choices=RunState.choices, default=RunState.QUEUED, db_index=True)
    reason = models.TextField(blank=True, help_text=_("Why the run failed or was cancelled."))
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="benchmark_runs")
    reproduces = models.ForeignKey("whitepaper.PublishedResult", on_delete=models.SET_NULL, null=True, blank=True,
                                   related_name="reproductions", help_text=_("The published row this run reproduces."))
    published_result = models.OneToOneField("whitepaper.PublishedResult", on_delete=models.SET_NULL, null=True, blank=True,
                                            related_name="run", help_text=_("The catalogue row this run was published as."))
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    cancel_requested = models.BooleanField(default=False)
    worker = models.CharField(max_length=200, blank=True, help_text=_("Celery worker name."))
    worker_pid = models.PositiveIntegerField(null=True, blank=True)
    client_host = models.CharField(max_length=200, blank=True)
    client_cores = models.PositiveIntegerField(null=True, blank=True)
    tool_version = models.CharField(max_length=100, blank=True)
    server_version = models.CharField(max_length=200, blank=True)
    step = models.PositiveIntegerField(default=0, help_text=_("Current step (thread count) from 1."))
    step_count = models.PositiveIntegerField(default=1)
    step_started_at = models.DateTimeField(null=True, blank=True)
    command_line = models.TextField(blank=True, help_text=_("Commands run, password removed."))
    log = models.TextField(blank=True, help_text=_("Tool output, password removed."))
    summary = models.JSONField(default=dict, blank=True)
    retracted_at = models.DateTimeField(null=True, blank=True, help_text=_("When staff took the published row back."))
    retracted_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    retraction_reason = models.TextField(blank=True)
    # Insight (runs/insight.py): the run's fingerprint and what the evidence beside the tool says.
    client_info = models.JSONField(default=dict, blank=True, help_text=_("The client host: cores, memory, OS, kernel, tool build."))
    server_settings = models.JSONField(default=dict, blank=True, help_text=_("SHOW GLOBAL VARIABLES / pg_settings at the start."))
    server_settings_hash = models.CharField(max_length=64, blank=True, help_text=_("sha256 of the sorted settings."))
    insight = models.JSONField(default=dict, blank=True,
                               help_text=_("Per step: latency percentiles and histogram, server-side evidence, client CPU."))
    client_bound = models.BooleanField(null=True, blank=True, help_text=_(
        "The client host was above 90 % CPU for most of a step: the result may understate the target."))
    schedule = models.ForeignKey("Schedule", on_delete=models.SET_NULL, null=True, blank=True, related_name="runs",
                                 help_text=_("The schedule that started this run (its origin); empty: started by hand."))
    # History (runs/history.py): judged against the earlier runs of its series when it succeeds.
    regression = models.BooleanField(null=True, blank=True, db_index=True, help_text=_(
        "TPS below the 95 % prediction interval of the series' earlier results and more than the practical threshold "
        "below them; null: not judged (too few earlier results)."))
    trend = models.JSONField(default=dict, blank=True, help_text=_(
        "The judgement (runs/history.py): the earlier results, their geometric mean and prediction interval, the "
        "threshold, the change in %, the smallest drop it can detect."))
    repeat_group = models.ForeignKey(RepeatGroup, on_delete=models.SET_NULL, null=True, blank=True, related_name="runs",
                                     help_text=_("The launch this run repeats with others (N runs of one set-up)."))
    repeat_index = models.PositiveIntegerField(null=True, blank=True, help_text=_("Which of the group's runs (from 1)."))
    client_load = models.JSONField(default=dict, blank=True, help_text=_(
        "The client host's load averages (1, 5, 15 minutes) and cores before the first step (start) and after the last "
        "(end, which includes the tool's own load)."))
    disturbed = models.BooleanField(null=True, blank=True, help_text=_(
        "The client host was loaded beyond its cores as the run started (1-minute load average per core above 1): left "
        "out of verdicts unless asked for, published only with an acknowledgement; null: not measured."))
    block = models.PositiveIntegerField(null=True, blank=True, help_text=_(
        "An interleaved comparison's block (from 1): each block ran every set-up once, in a shuffled order."))
    # A campaign's run (runs/campaigns.py): held while its campaign is paused, and the run it is the one retry of.
    held = models.BooleanField(default=False, help_text=_(
        "Queued in a paused campaign: no worker claims it, and it holds no place in its target's queue, until the "
        "campaign resumes."))
    retry_of = models.OneToOneField("self", on_delete=models.SET_NULL, null=True, blank=True, related_name="retry",
                                    help_text=_("The campaign run that failed or was disturbed, which this run measures again."))
    # A run whose server saw other load (runs.insight.other_load) is published only when someone says they
    # know: who and when are kept on the run (issue 23.3).
    other_load_acknowledged_at = models.DateTimeField(null=True, blank=True, help_text=_(
        "When its publisher acknowledged that the server saw other load during the run."))
    other_load_acknowledged_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                                   related_name="+")
    # A run that ended without its cleanup dropping its benchmark tables (a target that stopped answering, a cleanup
    # that failed or was stopped, a dead worker whose target the reconciler could not reach): their names and why,
    # for the run page to offer dropping them (runs/leftovers.py). Forgotten once they are dropped, by any run.
    leftover_tables = models.JSONField(default=list, blank=True, help_text=_(
        "Benchmark tables the run may have left on the target (its cleanup did not drop them)."))
    leftover_cause = models.CharField(max_length=1000, blank=True, help_text=_(
        "Why the cleanup did not drop them: the target stopped answering, the cleanup failed or was stopped, or the worker died."))
    # Multi-client runs (runs/clients.py): the agreed start of each step, {"run-1": ISO time, ...}.
    barrier = models.JSONField(default=dict, blank=True, help_text=_("Per step: the moment every client starts it."))
    # Remote targets (runs/access.py): measured before the first step, and the server's view of the tool's TLS.
    round_trip = models.JSONField(default=dict, blank=True, help_text=_(
        "Client-to-target round trip before the run: median, min, max of trivial queries (ms)."))
    tls = models.JSONField(default=dict, blank=True, help_text=_(
        "The target's TLS mode and the server's own view of the tool's sessions (cipher, version)."))

    objects = RunQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            # One run at a time per server and database (whichever target entry names it): a second waits in 'queued'.
            models.UniqueConstraint(fields=["database_key"], condition=Q(state__in=ACTIVE_STATES),
                                    name="one_active_run_per_database"),
        ]

    def __str__(self):
        return f"run {self.pk} ({self.profile} on {self.target})"

    def get_absolute_url(self):
        return reverse("runs:run-detail", args=[self.pk])

    def save(self, *args, **kwargs):
        if not self.database_key:
            self.database_key = self.target.database_key()
        super().save(*args, **kwargs)

    # --- state machine -------------------------------------------------------------------------
    @property
    def is_active(self):
        return self.state in ACTIVE_STATES

    @property
    def is_final(self):
        return self.state in FINAL_STATES

    @property
    def can_cancel(self):
        return not self.is_final

    @property
    def can_publish(self):
        return not self.publish_refusal

    @property
    def publish_refusal(self):
        """Why this run cannot be published ("" when it can): the one rule of the run page, its confirmation, the
        API and publish_run."""
        if self.state != RunState.SUCCEEDED:
            return _("only a succeeded run can be published; this one is %(state)s.") % {"state": self.get_state_display()}
        if self.published_result_id is not None or self.retracted_at is not None:
            return _("it is already published (or was retracted).")
        if self.repeat_group_id:  # a series publishes once, as one row (runs/publish.py)
            members = list(Run.objects.filter(repeat_group_id=self.repeat_group_id).only("id", "state", "published_result_id"))
            if any(m.state not in FINAL_STATES for m in members):
                return _("its repeat group still has runs to finish: a series is published as one row once all its runs "
                         "have ended.")
            published = next((m.pk for m in members if m.pk != self.pk and m.published_result_id), None)
            if published:
                return _("its repeat group is already published, as one row, from run %(id)s.") % {"id": published}
        if is_capacity(self.params):  # a search publishes the rate it sustained under its bound (runs/publish.py)
            if not (self.summary or {}).get("capacity", {}).get("sustained_tps"):
                return _("the capacity search sustained no rate under its bound.")
            return ""
        if is_open_loop(self.params):
            return _("an open-loop run's TPS is the rate it was offered, not what the server sustains, and is not "
                     "comparable with closed-loop TPS: publish a capacity search instead (the rate sustained under a p95 "
                     "bound).")
        if not (self.summary or {}).get("tps"):
            return _("it measured no TPS.")
        return ""

    @property
    def other_load(self):
        """The steps whose server counted other load beside the tool, beyond the stated tolerance (runs/insight.py)."""
        return steps_with_other_load((self.insight or {}).get("steps"))

    @property
    def client_bound_cause(self):
        """What saturated, for a client-bound run (else None): "shared_host" when the tool ran on the database's own
        host, so the result measures that shared host: the target's address (as resolved into database_key) is a
        loopback address, or the worker found it to be one of its host's own (client_info's target_on_client_host:
        its interface's address; the worker's finding, where it made one, decides); "client_cpu" otherwise (the client host's CPU, the tool's own or others' on it)."""
        if not self.client_bound:
            return None
        on_client_host = (self.client_info or {}).get("target_on_client_host")
        if on_client_host is not None:  # the worker's own finding: the key's address is the dashboard host's view
            return "shared_host" if on_client_host else "client_cpu"
        address = (self.database_key or "").split("|")[1:2]
        try:
            shared = bool(address) and ipaddress.ip_address(address[0]).is_loopback
        except ValueError:
            shared = address == ["localhost"]
        return "shared_host" if shared else "client_cpu"

    @cached_property  # read several times a page; the command line is fixed once the run has started
    def latency_caveat(self):
        """Why this run's latency figures are not to be trusted, or "": one rule for the run page, the API and the
        export. The rule is the tool's driver's (runs/drivers/pgbench.py: -r and -P on several threads)."""
        jobs = get_driver(self.params.get("tool") or self.profile.tool).latency_mismeasured_jobs(self.command_line)
        if jobs is None:
            return ""
        return _("pgbench ran with -r and -P on %(jobs)s threads (-j), where pgbench 15 measures every transaction's "
                 "latency wrong, far below clients / TPS: this run's latency figures are not to be trusted. Its TPS "
                 "is.") % {"jobs": jobs}

    @property
    def loop(self):
        """"open": the run offered a fixed rate (rate_tps; summary.open_loop has its figures); "closed": its threads
        sent each next transaction when the last returned, a thread sweep's steps too."""
        return "open" if is_open_loop(self.params) else "closed"

    def summary_latency(self):
        """The summary's latency line (ms): min, avg, max and p95 as the tool's final report prints them; where
        the report has no p95 or max (pgbench prints only the average), the latency table's for the same step
        (its transaction log, runs/drivers/latency.py), with `filled_from` naming that method."""
        summary, steps = self.summary or {}, (self.insight or {}).get("steps") or []
        line = {k: summary.get(f"latency_{k}_ms") for k in ("min", "avg", "max", "p95")}
        step = next((s for s in steps if s.get("step") == summary.get("step")), steps[0] if len(steps) == 1 else None)
        measured = (step or {}).get("latency") or {}
        filled = [k for k in ("max", "p95") if line[k] is None and measured.get(f"{k}_ms") is not None]
        for k in filled:
            line[k] = measured[f"{k}_ms"]
        line["filled_from"] = measured.get("method", "") if filled else ""
        return line

    def transition(self, to, *, allowed_from=None, unless=None, only_if=None, **fields):
        """Move to state `to` only if the row is still in one of the states that may precede it (and `only_if`, a Q
        on the row, holds, and `unless`, a queryset, finds nothing). Returns True when this call made the move. The
        row in the database decides, not this object. Called by runs/actions.py, the one place each state change is
        made."""
        sources = [s for s, targets in TRANSITIONS.items() if to in targets]
        if allowed_from is not None:
            sources = [s for s in sources if s in allowed_from]
        now = timezone.now()
        fields.setdefault("heartbeat_at", now)
        if to in FINAL_STATES:
            fields.setdefault("finished_at", now)
        try:
            with transaction.atomic():
                moving = Run.objects.filter(pk=self.pk, state__in=sources)
                if only_if is not None:
                    moving = moving.filter(only_if)
                if unless is not None:
                    moving = moving.filter(~Exists(unless))
                moved = moving.update(state=to, **fields)
                if moved and to in FINAL_STATES:
                    self.seal_log()  # in the same transaction: an ended run is never seen without its log
        except IntegrityError:  # another run of the target is active: this one keeps waiting
            return False
        # With its target and profile: a plain refresh forgets them, and the engine's next read of run.target would be
        # a query outside its retrying guard (runs.execution.retry_database), failing the run at a blip of the database.
        self.refresh_from_db(from_queryset=Run.objects.select_related("target", "profile"))
        return bool(moved)

    def queued_ahead(self):
        """The runs of the same server and database queued before this one (one definition of the queue's order); a
        held run (a paused campaign's) keeps no place."""
        return Run.objects.filter(database_key=self.database_key, state=RunState.QUEUED, held=False).exclude(pk=self.pk).filter(
            Q(created_at__lt=self.created_at) | Q(created_at=self.created_at, pk__lt=self.pk))

    def takeable_ahead(self):
        """The runs queued ahead of this one that a worker can take: one on a queue no live worker consumes (its
        target's pool has no worker now) is passed, so it does not hold the database for the unclaimed limit
        (runs/dispatch.unconsumed; this run's own queue is consumed by whoever asks to claim it)."""
        ahead = self.queued_ahead()
        queues = set(ahead.values_list("target__queue", flat=True).distinct()) - {self.target.queue}
        skip = unconsumed(queues)
        return ahead.exclude(target__queue__in=skip) if skip else ahead

    def beat(self, **fields):
        Run.objects.filter(pk=self.pk).update(heartbeat_at=timezone.now(), **fields)

    # --- the log: appended while the run is live, one text once it has ended ------------------------
    def append_log(self, lines):
        """The worker's new log lines, as one row (a live run's log is appended, never rewritten)."""
        if lines:
            LogChunk.objects.create(run_id=self.pk, text="".join(f"{line}\n" for line in lines))

    def seal_log(self):
        """As the run ends (Run.transition): its log's rows become Run.log in one write (its last MAX_LOG_CHARS)."""
        chunks = list(LogChunk.objects.filter(run_id=self.pk).values_list("id", "text"))
        if not chunks:
            return
        log = Run.objects.filter(pk=self.pk).values_list("log", flat=True).get()
        text = (log + "\n" if log else "") + "".join(t for _, t in chunks).removesuffix("\n")
        if len(text) > MAX_LOG_CHARS:
            text = "[… earlier output dropped …]\n" + text[-MAX_LOG_CHARS:]
        Run.objects.filter(pk=self.pk).update(log=text)
        LogChunk.objects.filter(run_id=self.pk, id__lte=chunks[-1][0]).delete()

    def log_tail(self, lines=40):
        """(the log's last `lines` lines, the id of the last row read: 0 for an ended run's Run.log)."""
        if self.is_final:
            return "\n".join(self.log.splitlines()[-lines:]), 0
        chunks = list(LogChunk.objects.filter(run_id=self.pk).order_by("-id").values_list("id", "text")[:lines])
        text = "".join(t for _, t in reversed(chunks))
        return "".join(f"{line}\n" for line in text.splitlines()[-lines:]), chunks[0][0] if chunks else 0

    def log_after(self, chunk_id):
        """(the log's lines written after row `chunk_id`, the last row's id)."""
        chunks = list(LogChunk.objects.filter(run_id=self.pk, id__gt=chunk_id).values_list("id", "text"))
        return "".join(t for _, t in chunks), chunks[-1][0] if chunks else chunk_id

    @property
    def full_log(self):
        """The whole log so far: Run.log once the run has ended, its rows while it is live."""
        if self.is_final:
            return self.log
        return self.log + "".join(LogChunk.objects.filter(run_id=self.pk).values_list("text", flat=True)).removesuffix("\n")

    def cancel_is_requested(self):
        return Run.objects.filter(pk=self.pk).values_list("cancel_requested", flat=True).first() is not False

    # --- progress --------------------------------------------------------------------------------
    def runs_ahead(self):
        """The runs of the same server and database this queued run waits behind: the active one, then the ones
        queued before it that a worker can take (takeable_ahead), in the order they will run. Empty when nothing is
        ahead (it waits for a worker)."""
        if self.state != RunState.QUEUED:
            return []
        active = Run.objects.filter(database_key=self.database_key, state__in=ACTIVE_STATES).exclude(pk=self.pk)
        ahead = list(active.select_related("target")) + list(self.takeable_ahead().select_related("target"))
        return sorted(ahead, key=lambda r: (r.state == RunState.QUEUED, r.created_at, r.pk))

    @property
    def waiting_for(self):
        """The run that has to end before this one can start (the target's active run, or the next in line)."""
        ahead = self.runs_ahead()
        return ahead[0] if ahead else None

    @property
    def expected_seconds(self):
        return expected_seconds(self.params)

    def progress(self):
        """(percent, seconds left) for the run phase, estimated from the step and its start time."""
        p = self.params or {}
        if self.state == RunState.SUCCEEDED:
            return 100, 0
        if self.state == RunState.QUEUED:
            # Counts from when the runs ahead of it on the same target end.
            waiting = sum((r.progress()[1] or 0) if r.is_active else r.expected_seconds for r in self.runs_ahead())
            return 0, waiting + self.expected_seconds
        if self.state != RunState.RUNNING or not self.step_started_at or not self.step:
            return (0, self.expected_seconds) if self.state == RunState.PREPARING else (None, None)
        per_step = p.get("duration_s", 0) + p.get("warmup_s", 0)
        elapsed_in_step = min(per_step, (timezone.now() - self.step_started_at).total_seconds())
        done = (self.step - 1) * per_step + elapsed_in_step
        total = max(1, self.expected_seconds)
        return int(100 * done / total), int(max(0, total - done))

    @property
    def duration_seconds(self):
        """Seconds from the claim to the end (or until now while it goes); None before it started."""
        if not self.started_at:
            return None
        return max(0, int(((self.finished_at or timezone.now()) - self.started_at).total_seconds()))

    @property
    def duration_text(self):
        """The duration as people read it: "45 s", "3 min 5 s", "1 h 2 min"."""
        seconds = self.duration_seconds
        return "" if seconds is None else duration_text(seconds)

    def heartbeat_stale(self, now=None):
        stale_after = timedelta(seconds=settings.RUNS_STALE_AFTER_SECONDS)
        last = self.heartbeat_at or self.started_at or self.created_at
        return (now or timezone.now()) - last > stale_after


class Schedule(models.Model):
    """A profile run on a target on a cron-like schedule. Celery beat (django-celery-beat's database
    scheduler) reads `periodic_task`, which calls runs.scheduled_run with this schedule's id; each run it
    starts is an ordinary run with the schedule as its origin (Run.schedule)."""

    name = models.CharField(_("name"), max_length=100, unique=True)
    target = models.ForeignKey(Target, on_delete=models.CASCADE, related_name="schedules", verbose_name=_("target"))
    profile = models.ForeignKey(BenchmarkProfile, on_delete=models.PROTECT, related_name="schedules", verbose_name=_("profile"))
    overrides = models.JSONField(default=dict, blank=True)
    cron = models.CharField(_("when (cron)"), max_length=100, help_text=_(
        "minute hour day-of-month month day-of-week, in the server's time zone: '0 3 * * *' daily at 03:00, "
        "'30 2 * * 1' Mondays at 02:30."))
    repeats = models.PositiveIntegerField(_("repeats"), default=1, validators=[MinValueValidator(1), MaxValueValidator(MAX_REPEATS)],
                                          help_text=_("Each due time runs the profile this many times in a row (mean and standard deviation)."))
    enabled = models.BooleanField(_("enabled"), default=True)
    large_run_confirmed = models.BooleanField(_("large run confirmed"), default=False, help_text=_(
        "Its author read the estimate of a large set-up (rows, disk, time) and confirmed it: each due time launches it "
        "without asking again. Required when the set-up is large."))
    periodic_task = models.OneToOneField("django_celery_beat.PeriodicTask", on_delete=models.SET_NULL, null=True, blank=True,
                                         related_name="+", editable=False)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    last_error = models.TextField(blank=True, help_text=_("Why the last due time started no run."))
    # Due times skipped because the schedule's previous run was still queued or running (runs/schedules.py),
    # newest first, at most SCHEDULE_SKIPS_KEPT: [{"at": ISO time, "run": id, "state": state}].
    skips = models.JSONField(default=list, blank=True, help_text=_(
        "Due times skipped while the previous run was still queued or running, newest first."))

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    def clean(self):
        """The schedule's rules (runs/schedules.py): a valid cron, a usable target, a profile of its engine,
        overrides the profile accepts. Errors name the field."""
        errors = schedule_errors(self)
        if errors:
            raise ValidationError(errors)
        if self.profile_id:  # stored typed, as a run's (the form's JSON may say "threads": "8")
            self.overrides = typed_overrides(self.profile, self.overrides)

    def recent_states(self, runs=None):
        """States of the schedule's last runs, newest first (runs: the prefetched runs, newest first)."""
        runs = runs if runs is not None else self.runs.order_by("-created_at", "-id")
        return [r.state for r in list(runs)[:settings.RUNS_SCHEDULE_FAILING_AFTER]]

    def keeps_failing(self, runs=None):
        """Its last RUNS_SCHEDULE_FAILING_AFTER runs all failed (a due time that could start no run is `last_error`)."""
        states = self.recent_states(runs)
        return len(states) >= settings.RUNS_SCHEDULE_FAILING_AFTER and all(s == RunState.FAILED for s in states)


@receiver(post_delete, sender=Schedule)
def _drop_beat_entry(sender, instance, **kwargs):
    """However a schedule is deleted (page, API, admin, shell), beat forgets it: its PeriodicTask goes too."""
    if instance.periodic_task_id:
        PeriodicTask.objects.filter(pk=instance.periodic_task_id).delete()


class IntervalReading(models.Model):
    """The numbers of one interval line of a tool (sysbench/pgbench), shared by the run's samples and
    each client's (one definition of what an interval line holds)."""

    step = models.PositiveIntegerField(default=1)
    warmup = models.BooleanField(default=False)
    threads = models.PositiveIntegerField()
    tps = models.FloatField()
    qps = models.FloatField(null=True, blank=True)
    reads = models.FloatField(null=True, blank=True)
    writes = models.FloatField(null=True, blank=True)
    other = models.FloatField(null=True, blank=True)
    latency_p95_ms = models.FloatField(null=True, blank=True)
    latency_avg_ms = models.FloatField(null=True, blank=True)
    errors_per_s = models.FloatField(null=True, blank=True)
    reconnects_per_s = models.FloatField(null=True, blank=True)

    class Meta:
        abstract = True


class Sample(IntervalReading):
    """One interval line of the tool's output, stored as it arrives."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="samples")
    t = models.FloatField(help_text=_("Seconds since the step started, as the tool prints it."))
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self):
        return f"run {self.run_id} step {self.step} t={self.t}"


class ServerSample(models.Model):
    """What the worker read beside the tool at one report interval of a step: the server's own counters
    (on a separate connection) as rates over the interval, and the client host's CPU."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="server_samples")
    step = models.PositiveIntegerField(default=1)
    warmup = models.BooleanField(default=False)
    t = models.FloatField(help_text=_("Seconds since the tool of the step was started (worker clock)."))
    sampled_at = models.DateTimeField()
    server_tps = models.FloatField(null=True, blank=True, help_text=_("Commits per second counted by the server."))
    rollbacks_per_s = models.FloatField(null=True, blank=True)
    queries_per_s = models.FloatField(null=True, blank=True, help_text=_("MySQL Questions per second."))
    running = models.IntegerField(null=True, blank=True, help_text=_("Threads_running / active backends."))
    lock_waiting = models.IntegerField(null=True, blank=True, help_text=_("PostgreSQL backends waiting on a lock."))
    lock_waits_per_s = models.FloatField(null=True, blank=True, help_text=_("InnoDB row lock waits per second."))
    buffer_hit_pct = models.FloatField(null=True, blank=True, help_text=_("Buffer pool reads served from memory (%)."))
    client_cpu_pct = models.FloatField(null=True, blank=True, help_text=_("The client host's CPU use, all cores (%)."))
    counters = models.JSONField(default=dict, blank=True, help_text=_("The server's cumulative counters as read."))

    class Meta:
        ordering = ["id"]

    def __str__(self):
        return f"run {self.run_id} step {self.step} server t={self.t}"


MAX_LOG_CHARS = 1_000_000  # an ended run's log keeps its last million characters (the final reports are last)


class LogChunk(models.Model):
    """New lines of a live run's log, one row per write of the worker (about one a second): appended, so a
    30-minute run does not rewrite its whole log every second. Run.seal_log makes them Run.log when it ends."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="log_chunks")
    text = models.TextField(help_text=_("Whole lines, each ending with a newline, password removed."))

    class Meta:
        ordering = ["id"]


class ClientState(models.TextChoices):
    WAITING = "waiting", _("waiting for a worker")
    ARRIVED = "arrived", _("arrived")
    RUNNING = "running", _("running")
    DONE = "done", _("done")
    FAILED = "failed", _("failed")
    STOPPED = "stopped", _("stopped")


CLIENT_FINAL_STATES = [ClientState.DONE, ClientState.FAILED, ClientState.STOPPED]
# Which client state may follow which (runs/actions.py makes each move): client 1 starts running at once, the
# others arrive first; a final state is never left.
CLIENT_TRANSITIONS = {
    ClientState.WAITING: {ClientState.ARRIVED, ClientState.RUNNING, ClientState.FAILED, ClientState.STOPPED},
    ClientState.ARRIVED: {ClientState.RUNNING, ClientState.DONE, ClientState.FAILED, ClientState.STOPPED},
    ClientState.RUNNING: {ClientState.DONE, ClientState.FAILED, ClientState.STOPPED},
}


class RunClient(models.Model):
    """One client host of a multi-client run (runs/clients.py): its share of the threads, where it ran,
    when it started each step (its own clock), its final reports and its evidence. Client 1 is the worker
    that claimed the run (it also prepares and cleans up); the others join through the barrier."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="clients")
    index = models.PositiveSmallIntegerField(help_text=_("1-based; client 1 prepares and cleans up."))
    state = models.CharField(max_length=20, choices=ClientState.choices, default=ClientState.WAITING)
    threads = models.PositiveIntegerField(help_text=_("Its threads in the first step."))
    host = models.CharField(max_length=200, blank=True)
    cores = models.PositiveIntegerField(null=True, blank=True)
    worker = models.CharField(max_length=200, blank=True)
    worker_pid = models.PositiveIntegerField(null=True, blank=True)
    ready_for = models.CharField(max_length=40, blank=True, help_text=_("The step it waits at the barrier for."))
    step_starts = models.JSONField(default=dict, blank=True, help_text=_("Per step: when its tool started (its own clock, ISO)."))
    reports = models.JSONField(default=list, blank=True, help_text=_("Its tool's final report per run step, with the histogram."))
    cpu = models.JSONField(default=list, blank=True, help_text=_("Per run step: its CPU use (%) per interval."))
    reason = models.TextField(blank=True)
    log = models.TextField(blank=True, help_text=_("Its tool's output, password removed."))
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "index"]
        constraints = [models.UniqueConstraint(fields=["run", "index"], name="one_client_per_index")]

    def __str__(self):
        return f"run {self.run_id} client {self.index}"

    @property
    def is_final(self):
        return self.state in CLIENT_FINAL_STATES

    def set(self, **fields):
        """Write fields other than the state, and the heartbeat (the row in the database is what the other
        clients read). The state moves only through transition (runs/actions.py)."""
        assert "state" not in fields, "a client's state changes through runs.actions"
        self._write(RunClient.objects.filter(pk=self.pk), fields)

    def transition(self, to, **fields):
        """Move to state `to` only if the row is still in a state that may precede it (CLIENT_TRANSITIONS), with
        `fields`. True when this call made the move; the row in the database decides, not this object."""
        sources = [s for s, targets in CLIENT_TRANSITIONS.items() if to in targets]
        return self._write(RunClient.objects.filter(pk=self.pk, state__in=sources), {**fields, "state": to})

    def _write(self, rows, fields):
        fields["heartbeat_at"] = timezone.now()
        moved = rows.update(**fields)
        if moved:
            for name, value in fields.items():
                setattr(self, name, value)
        return bool(moved)

    def lost(self, now=None):
        """Silent for longer than RUNS_CLIENT_LOST_SECONDS while it should be reporting."""
        if self.is_final or self.state == ClientState.WAITING or self.heartbeat_at is None:
            return False
        return ((now or timezone.now()) - self.heartbeat_at).total_seconds() > settings.RUNS_CLIENT_LOST_SECONDS


class ClientSample(IntervalReading):
    """One interval line of one client's tool, as it arrived. The run's own samples (Sample) are their sums
    per interval, aligned by time from the agreed start."""

    client = models.ForeignKey(RunClient, on_delete=models.CASCADE, related_name="samples")
    t = models.FloatField(help_text=_("Seconds since its tool started, as the tool prints it."))
    at = models.DateTimeField(help_text=_("When the interval ended: its tool's start (its clock) + t."))
    merged = models.BooleanField(default=False, help_text=_("Already summed into the run's samples."))

    class Meta:
        ordering = ["id"]


# A campaign (issue 47): one profile over several targets, each target a cell measured as a series.
DEFAULT_CAMPAIGN_REPEATS, MIN_CAMPAIGN_REPEATS = 5, 2


class Campaign(models.Model):
    """One profile (with its overrides) run against several targets, `repeats` runs per target: each target is a
    cell, a repeat group of its own, and the groups share one launch, so that rounds interleave the targets in a
    shuffled order (runs/services.py queue_blocks; round r is block r). Its state is derived from its runs
    (runs/campaigns.py), never stored."""

    name = models.CharField(_("name"), max_length=200)
    profile = models.ForeignKey(BenchmarkProfile, on_delete=models.PROTECT, related_name="campaigns")
    overrides = models.JSONField(default=dict, blank=True)
    repeats = models.PositiveIntegerField(_("repeats"), default=DEFAULT_CAMPAIGN_REPEATS, validators=[
        MinValueValidator(MIN_CAMPAIGN_REPEATS), MaxValueValidator(MAX_REPEATS)], help_text=_("Runs per cell (rounds)."))
    reference = models.ForeignKey("whitepaper.Document", on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
                                  help_text=_("A vendor edition whose rows the campaign measures again."))
    launch = models.CharField(max_length=32, editable=False, db_index=True,
                              help_text=_("The launch id its cells' repeat groups share."))
    paused_at = models.DateTimeField(null=True, blank=True, help_text=_(
        "Set while the campaign is paused: its queued runs are held (Run.held), its active runs finish."))
    # Its edition (runs/campaign_edition.py): the drafted data file, reviewed, then imported as a document.
    draft = models.JSONField(default=dict, blank=True, help_text=_(
        "The drafted edition: a data file in the catalogue's format, what publishing imports."))
    drafted_at = models.DateTimeField(null=True, blank=True)
    drafted_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    edition = models.ForeignKey("whitepaper.Document", on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
                                help_text=_("The published edition (a document of internal measurements)."))
    published_at = models.DateTimeField(null=True, blank=True)
    published_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                     related_name="+")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return self.name


class CampaignCell(models.Model):
    """One target of a campaign and its series; the target's declared size is kept as it was at launch."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="cells")
    position = models.PositiveSmallIntegerField(help_text=_("Its place in the campaign (from 0)."))
    target = models.ForeignKey(Target, on_delete=models.PROTECT, related_name="+")
    repeat_group = models.OneToOneField(RepeatGroup, on_delete=models.PROTECT, related_name="campaign_cell")
    engine_version = models.CharField(max_length=200, blank=True)
    family = models.CharField(max_length=60, blank=True)
    vcpus = models.PositiveIntegerField(null=True, blank=True)
    memory_gb = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["campaign", "position"]
        constraints = [models.UniqueConstraint(fields=["campaign", "position"], name="campaign_cell_position")]

    def __str__(self):
        return f"{self.campaign} / {self.target}"
