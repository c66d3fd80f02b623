"""SIGTERM as KeyboardInterrupt while a target runs, so that the target's tree is still ended.

Shared by ``qg-audit verify`` (auditor.commands.verify) and ``verify --ray``
(auditor.runtime.ray_verify); it lives in runtime/ so that runtime never imports commands/.
"""

from __future__ import annotations

import signal


def sigterm_as_interrupt():
    """A SIGTERM to the probe (CI cancelling a job) must still end the target's tree.

    Returns the previous handler, to be restored with ``signal.signal(SIGTERM, previous)``.
    """
    def handler(signum, frame):
        raise KeyboardInterrupt

    try:
        return signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        return signal.getsignal(signal.SIGTERM)
