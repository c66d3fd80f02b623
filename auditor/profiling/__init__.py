"""Profiles from timing records; the logic lives in auditor.profiling.summary (see there).

The seam other commands use::

    from auditor.profiling import summarize
    prof = summarize(records, warmup_steps=5, window=50)
"""

from auditor.profiling.diagnose import Thresholds
from auditor.profiling.summary import (
    DEFAULT_WINDOW, SCHEMA, FirstStep, NoTimingRecords, PhaseStats, ProcessRow, Profile, Spike, WaitStats,
    summarize,
)

__all__ = ["summarize", "Profile", "Thresholds", "SCHEMA", "DEFAULT_WINDOW", "NoTimingRecords", "PhaseStats",
           "WaitStats", "ProcessRow", "FirstStep", "Spike"]
