"""The flow layer: where each parallelism value comes from and which backend runs it.

Vocabulary (taint engines' words, pyflakes' scopes and bindings):

- a **source** is where a value enters: a config read (key path and fallback default), a
  parameter, a literal, an environment variable, or a computed expression;
- a **sink** is a parallel backend's count argument (a consume site);
- a **step** carries a value between them: an assignment, ``a or b``, ``min``/``max``,
  ``int()``, a conditional, a call into a summarised helper.

Two halves, so that per-file work caches with the file (issue 15):

- ``auditor.flow.local`` runs inside the Python extractor on one file's AST and returns
  plain data (value trees for sinks and call arguments, function signatures, config
  literals of Python config modules), stored as ``FileResult.flow``; no AST node survives.
- ``auditor.flow.resolve`` runs on the whole scan before the join: it summarises helpers
  across files to a bounded fixed point, adds the consume sites helpers create, re-keys each
  site by the source its trace reaches (join by flow), turns Python config literals into
  define sites, and after the join evaluates each trace (``auditor.flow.values``).

Every value tree is a dict ``{"k": kind, "file", "line", "col", "text", ...}`` whose
children are in ``"of"``; ``auditor.flow.values.path`` flattens one into the ``flow`` list
that sites and findings carry (source first, sink last).
"""
