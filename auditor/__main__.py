import os
import sys

# ``python -m`` puts the current directory first on sys.path; a scanned project's yaml.py
# or json.py there would then be imported (and run) in place of the library. Drop it
# before any other import: qg-audit never runs the code it scans. (``auditor`` itself is
# already imported by now, so the package still loads when run from its own checkout.)
if sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

from auditor.cli import main  # noqa: E402

raise SystemExit(main())
