"""A live status line on stderr while a command waits ("waiting for 4 workers: 12 s, ...").

On a terminal the line is rewritten in place (at most twice a second) and erased when the
wait is over. Elsewhere (CI logs, a pipe) a line is printed when the wait passes QUIET_S and
then every LOG_EVERY seconds, so a log shows the wait without a line per poll.
"""

from __future__ import annotations

import sys
import time

from auditor.render.safe import printable

QUIET_S = 2.0  # a wait shorter than this prints nothing
LOG_EVERY = 10.0


class StatusLine:
    def __init__(self, stream=None, prefix: str = "qg-audit"):
        self.stream = stream or sys.stderr
        self.prefix = prefix
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.start = time.monotonic()
        self.last = 0.0
        self.shown = False  # a line is on the terminal (tty) / something was logged
        self.width = 0

    def __call__(self, status: str | None) -> None:
        """A status while waiting; None when the wait is over."""
        now = time.monotonic()
        if status is None:
            if self.tty and self.shown:
                self._write("\r" + " " * self.width + "\r")
            self.shown = False
            return
        if now - self.start < QUIET_S:
            return
        line = f"{self.prefix}: {printable(status)}"
        if self.tty:
            if now - self.last >= 0.5:
                self.width = max(self.width, len(line))
                self._write("\r" + line.ljust(self.width))
                self.last, self.shown = now, True
        elif not self.shown or now - self.last >= LOG_EVERY:
            self._write(line + "\n")
            self.last, self.shown = now, True

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            pass  # a closed stderr must not end the run
