"""Public name of :mod:`auditor.worker.report` (users' code imports ``auditor.report``).

The alias makes both names one module object, so state (open descriptors, timers) is
never split between two copies.
"""

import sys

from auditor.worker import report as _impl

sys.modules[__name__] = _impl
