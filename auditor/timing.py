"""Public name of :mod:`auditor.worker.timing` (users' code imports ``auditor.timing``).

The alias makes both names one module object, so state (open descriptors, timers) is
never split between two copies.
"""

import sys

from auditor.worker import timing as _impl

sys.modules[__name__] = _impl
