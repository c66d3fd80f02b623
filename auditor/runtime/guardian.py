"""The guardian: ends the target's tree even when qg-audit itself is SIGKILLed.

``run_target`` ends the tree in a ``finally`` on every way out it can see (normal end,
exception, SIGINT, SIGTERM, SIGHUP). A SIGKILL (the OOM killer, a CI hard-kill) runs no
``finally``, so a second, tiny process watches the probe:

* the probe starts it (``Guardian.start``) before the target, in a session of its own, and
  keeps the write end of a pipe; the target never inherits that end;
* at each census poll the probe sends the members it knows (``pid create_time`` lines) and
  the target's session id;
* a clean end sends ``done`` and closes the pipe: the guardian exits;
* end of file without ``done`` means the probe died: the guardian stops (SIGSTOP) every
  known member, every process of the target's session, every process whose environment
  carries this run's ``QG_AUDIT_REPORT`` (it names the run's own temporary directory, and
  every process of the target inherits it) and every child of a stopped process, until no
  new one appears (a stopped process cannot fork), then SIGKILLs them all, removes the
  run's temporary directory and exits.

Also, the target's root gets ``PR_SET_PDEATHSIG`` (SIGKILL) in ``preexec``: it dies with the
probe even in the instant before the guardian has heard of it.

What can still survive a SIGKILL of qg-audit: a process that was started after the last
census poll (at most one interval), left the target's session (``setsid``), scrubbed its
environment, and whose parent had already exited, all before the guardian woke up; and a
process of another user whose environment the guardian may not read. docs/verify.md says
the same.

This file runs as a script (``python -I -S guardian.py FD TMPDIR``): standard library only,
and it reads /proc itself.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

_ROUNDS = 50  # stop/rescan rounds before the kill; each finds the children of the last


def _stat(pid: int):
    """(ppid, session, create_time) from /proc/PID/stat, or None when gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2:].split()
    try:
        ticks = int(fields[19])
    except (IndexError, ValueError):
        return None
    return int(fields[1]), int(fields[3]), round(_BOOT + ticks / _TCK, 2)


def _boot_time() -> float:
    with open("/proc/stat", "rb") as f:
        for line in f:
            if line.startswith(b"btime"):
                return float(line.split()[1])
    return 0.0


def _all_pids() -> list[int]:
    return [int(n) for n in os.listdir("/proc") if n.isdigit()]


def _carries(pid: int, marker: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return marker in f.read()
    except OSError:
        return False


def _end_all(known: dict[int, float], sessions: set[int], marker: bytes) -> None:
    me = os.getpid()
    doomed: dict[int, float] = {}
    for pid, ctime in known.items():
        st = _stat(pid)
        if st is not None and abs(st[2] - ctime) < 0.05:
            doomed[pid] = st[2]
    for _ in range(_ROUNDS):
        for pid in doomed:
            try:
                os.kill(pid, signal.SIGSTOP)
            except OSError:
                pass
        new = {}
        for pid in _all_pids():
            if pid == me or pid in doomed:
                continue
            st = _stat(pid)
            if st is not None and (st[0] in doomed or st[1] in sessions or (marker and _carries(pid, marker))):
                new[pid] = st[2]
        if not new:
            break
        doomed.update(new)
    for pid, ctime in doomed.items():
        st = _stat(pid)
        if st is not None and abs(st[2] - ctime) < 0.05:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def main(fd: int, tmpdir: str) -> int:
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)  # only the pipe's end of file decides
    known: dict[int, float] = {}
    sessions: set[int] = set()
    clean = False
    buffered = b""
    with os.fdopen(fd, "rb", buffering=0) as pipe:
        while True:
            chunk = pipe.read(65536)
            if not chunk:
                break
            lines = (buffered + chunk).split(b"\n")
            buffered = lines.pop()
            for line in lines:
                parts = line.split()
                if parts == [b"done"]:
                    clean = True
                elif len(parts) == 2 and parts[0] == b"session":
                    sessions.add(int(parts[1]))
                elif len(parts) == 2:
                    known[int(parts[0])] = float(parts[1])
    if not clean:
        marker = f"QG_AUDIT_REPORT={os.path.join(tmpdir, '')}".encode() if tmpdir else b""
        _end_all(known, sessions, marker)
        if tmpdir and os.path.basename(tmpdir).startswith("qg-audit-"):
            import shutil

            shutil.rmtree(tmpdir, ignore_errors=True)
    return 0


class Guardian:
    """The probe's side: start the guardian, tell it what to end, say goodbye."""

    def __init__(self, tmpdir: str):
        self._write = None
        self._proc = None
        self._sent: set[tuple[int, float]] = set()
        self.note: str | None = None
        if not sys.platform.startswith("linux"):
            self.note = "no guardian on this platform: a SIGKILL of qg-audit leaves the target running"
            return
        read_fd, write_fd = os.pipe()  # both non-inheritable: the target never holds the pipe
        try:
            self._proc = subprocess.Popen([sys.executable, "-I", "-S", os.path.abspath(__file__), str(read_fd), tmpdir],
                             pass_fds=(read_fd,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
        except OSError as exc:
            os.close(write_fd)
            self.note = f"could not start the guardian ({exc}): a SIGKILL of qg-audit would leave the target running"
            return
        finally:
            os.close(read_fd)
        self._write = write_fd

    def _send(self, text: str) -> None:
        if self._write is None:
            return
        try:
            os.write(self._write, text.encode())
        except OSError:
            self.close(clean=False)

    def watch_session(self, sid: int) -> None:
        self._send(f"session {sid}\n")

    def watch(self, rows) -> None:
        """Tell the guardian about members it has not heard of yet."""
        new = [r for r in rows if r.key not in self._sent and r.alive]
        if new:
            self._sent.update(r.key for r in new)
            self._send("".join(f"{r.pid} {r.create_time}\n" for r in new))

    def close(self, clean: bool = True) -> None:
        if self._write is None:
            return
        fd, self._write = self._write, None
        try:
            if clean:
                os.write(fd, b"done\n")
        except OSError:
            pass
        finally:
            os.close(fd)
        if self._proc is not None:
            try:  # it exits at once on "done" or after ending the tree; collect it, leave no zombie
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass


if __name__ == "__main__":
    _TCK = os.sysconf("SC_CLK_TCK")
    _BOOT = _boot_time()
    raise SystemExit(main(int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else ""))
