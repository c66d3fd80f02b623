"""SIGTERM and SIGHUP end a run the way Ctrl-C does, so the tree is always ended.

CI cancelling a job sends SIGTERM; a closed terminal or a dropped ssh sends SIGHUP. Their
default action kills the probe without running any ``finally``, which is how targets were
left running under init. Inside ``terminating_signals()`` all three raise ``Interrupted``
(a KeyboardInterrupt, so every existing Ctrl-C path applies); during teardown
(``hold()``) a further signal is remembered rather than raised, so it cannot cut the
teardown short, and is raised once the teardown is over.
"""

from __future__ import annotations

import signal
import threading

TERMINATING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(KeyboardInterrupt):
    """A terminating signal arrived; ``signum`` says which (exit status 128 + signum)."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class terminating_signals:
    """Context manager: SIGINT, SIGTERM, SIGHUP raise ``Interrupted`` inside it."""

    def __init__(self):
        self._previous: dict[int, object] = {}
        self._holding = False
        self.pending: int | None = None

    def __enter__(self) -> "terminating_signals":
        if threading.current_thread() is threading.main_thread():
            for sig in TERMINATING:
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum, _frame) -> None:
        if self._holding:
            self.pending = self.pending or signum
            return
        self._holding = True  # the teardown that follows must not be interrupted again
        raise Interrupted(signum)

    def hold(self) -> None:
        """From now on, remember signals instead of raising them."""
        self._holding = True

    def __exit__(self, exc_type, exc, tb) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()
        if exc_type is None and self.pending is not None:
            raise Interrupted(self.pending)
