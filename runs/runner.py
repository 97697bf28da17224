"""Runs one tool command: no shell, its own process group, a time limit, both streams read line by
line as they arrive, and a stop check a few times a second (cancel). Knows nothing of Django.

Secret files (sysbench's config with the password) are never written to disk: each one is a pipe the
tool inherits, filled before the tool starts, and named in its argv as /dev/fd/N. Nothing holding the
password outlives the tool, whatever kills the worker (checked by hand with sysbench 1.0.20: it reads
--config-file once, at start, with stdio, so a pipe serves prepare, run and cleanup)."""

import ctypes
import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass

PR_SET_PDEATHSIG = 1
POLL_S = 0.25
EXIT_GRACE_S = 5.0


def _die_with_parent():
    """In the child, before exec: a new session (own process group), and SIGKILL if the worker
    process that started us dies, so a killed worker leaves no benchmark running."""
    os.setsid()
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:
        pass


@dataclass
class Outcome:
    returncode: int | None
    stdout: str
    stderr: str
    stopped: str = ""  # "" | "cancelled" | "timeout"
    pid: int | None = None


def kill_group(proc, grace_s=2.0):
    """SIGTERM the whole process group, then SIGKILL what is left after the grace period."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


PIPE_CAPACITY = 65536  # Linux's default pipe buffer: a secret file is written whole before the tool starts


def secret_pipes(argv, secret_files):
    """For each {path: content}: a pipe holding the content; every argv item naming path names /dev/fd/N
    instead. Returns (argv, read fds to pass). The write ends are closed, so the tool reads to EOF."""
    argv, fds = list(argv), []
    try:
        for path, content in (secret_files or {}).items():
            data = content.encode()
            if len(data) >= PIPE_CAPACITY:
                raise ValueError(f"secret file {os.path.basename(path)} is too large for a pipe")
            read_fd, write_fd = os.pipe()
            fds.append(read_fd)
            try:
                os.write(write_fd, data)
            finally:
                os.close(write_fd)
            argv = [item.replace(path, f"/dev/fd/{read_fd}") for item in argv]
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    return argv, fds


def run_command(argv, *, env_extra=None, cwd=None, time_limit_s, on_line=None, should_stop=None, on_tick=None, on_start=None,
                secret_files=None):
    """Run argv; call on_line(stream, line) for each line, should_stop() / on_tick() every ~0.25 s.
    secret_files {path: content} reach the tool through pipes (see the module docstring), never the disk.
    Returns an Outcome; `stopped` says if we killed it (cancel or time limit)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PGPASS", "MYSQL_PWD"))}
    env.update(env_extra or {})
    env["LC_ALL"] = "C"
    argv, fds = secret_pipes(argv, secret_files)
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, cwd=cwd,
                                env=env, preexec_fn=_die_with_parent, close_fds=True, pass_fds=fds)
    finally:
        for fd in fds:  # the tool has its own copies; ours go at once
            os.close(fd)
    if on_start:
        on_start(proc)
    sel = selectors.DefaultSelector()
    buffers = {"stdout": b"", "stderr": b""}
    collected = {"stdout": [], "stderr": []}
    sel.register(proc.stdout, selectors.EVENT_READ, "stdout")
    sel.register(proc.stderr, selectors.EVENT_READ, "stderr")
    deadline = time.monotonic() + time_limit_s
    stopped = ""
    open_streams = 2
    try:
        while open_streams:
            for key, _ in sel.select(timeout=POLL_S):
                name = key.data
                chunk = os.read(key.fileobj.fileno(), 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                    open_streams -= 1
                    if buffers[name]:
                        line = buffers[name].decode(errors="replace")
                        collected[name].append(line)
                        if on_line:
                            on_line(name, line)
                        buffers[name] = b""
                    continue
                buffers[name] += chunk
                *lines, buffers[name] = buffers[name].split(b"\n")
                for raw in lines:
                    line = raw.decode(errors="replace").rstrip("\r")
                    collected[name].append(line)
                    if on_line:
                        on_line(name, line)
            if on_tick:
                on_tick()
            if should_stop and should_stop():
                stopped = "cancelled"
                kill_group(proc)
                break
            if time.monotonic() > deadline:
                stopped = "timeout"
                kill_group(proc)
                break
    finally:
        sel.close()
        if not open_streams and not stopped:
            # Both streams are closed: the tool is exiting. Let it (a SIGTERM now would turn its own exit
            # status into -15); only one that lingers without output is killed.
            try:
                proc.wait(timeout=EXIT_GRACE_S)
            except subprocess.TimeoutExpired:
                pass
        if proc.poll() is None:
            kill_group(proc)
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    return Outcome(proc.returncode, "\n".join(collected["stdout"]), "\n".join(collected["stderr"]), stopped, proc.pid)
