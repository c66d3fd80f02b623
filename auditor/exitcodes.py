"""Exit codes: a contract CI scripts depend on (see README, "Exit codes")."""

EXIT_OK = 0  # clean / verification passed
EXIT_FINDINGS = 1  # findings at or above --fail-on / verification failed
EXIT_USAGE = 2  # usage, configuration or internal error; never masked by --exit-zero
EXIT_TARGET = 3  # the target could not start or failed before a verdict


class UsageError(Exception):
    """Bad flags, missing paths, malformed configuration: exit 2 with one clear line."""
