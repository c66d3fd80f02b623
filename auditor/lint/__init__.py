"""Rules on the joined knob model, and the CI gate. The seam the scan command calls:

    add_arguments(parser)            # --select/--ignore/--fail-on/--baseline/... flags
    check(result, args) -> None      # fills result.findings
    exit_code(result, args) -> int   # 0 clean, 1 findings at/above --fail-on
"""

from __future__ import annotations

from auditor.exitcodes import EXIT_OK


def add_arguments(parser) -> None:
    pass


def check(result, args) -> None:
    pass


def exit_code(result, args) -> int:
    return EXIT_OK
