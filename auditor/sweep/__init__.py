"""``qg-audit sweep``: change one variable (batch size), keep everything else fixed, measure.

Layers: ``params`` (the variable and {NAME} substitution), ``measure`` (one fresh process
per run through auditor.runtime.session.run_target and auditor.profiling.summarize),
``stats`` (mean +- stddev, hyperfine's median/MAD outliers), ``conclude`` (plateau, memory
near its limit, "stop at B"), ``context`` (what stayed fixed), ``gpu`` (NVML peaks),
``runner`` (the loop). Rendering lives in auditor/render/sweep_*.py. See docs/sweep.md.
"""

from auditor.sweep.model import SCHEMA, RunRecord, Sweep, ValueResult

__all__ = ["SCHEMA", "RunRecord", "Sweep", "ValueResult"]
