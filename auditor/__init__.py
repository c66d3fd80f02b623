"""qg-audit: does the parallelism a sampler's configuration asks for really take effect?

This package is imported inside users' worker processes (``auditor.report``,
``auditor.timing``), so this file must stay import-free and cheap.
"""

__version__ = "0.4.38"
