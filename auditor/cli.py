"""Command-line entry point: ``qg-audit COMMAND ...``.

Only the chosen command's module is imported, so ``qg-audit verify`` does not pay for
libcst and the scan machinery, and one command's optional extras never break another.
Each command module defines ``add_arguments(parser)`` and ``run(args) -> int``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from auditor import __version__
from auditor.exitcodes import EXIT_USAGE, UsageError

# name -> (module, one-line help). A fixed, short table: commands are a CLI contract.
COMMANDS: dict[str, tuple[str, str]] = {
    "scan": ("auditor.commands.scan", "inventory parallelism knobs and report silent fallbacks (static)"),
    "rules": ("auditor.commands.rules", "list the rule catalogue"),
    "rule": ("auditor.commands.rules", "explain one rule with its examples"),
    "verify": ("auditor.commands.verify", "launch a sampler and check its workers really run (runtime)"),
    "profile": ("auditor.commands.profile", "time sampling phases and the trainer's wait ratio"),
    "sweep": ("auditor.commands.sweep", "one-variable batch-size sweep: throughput, phases, memory peaks"),
    "diagnose": ("auditor.commands.diagnose", "the whole method: profile, wait ratio, batch sweep, scan + verify"),
}


def _top_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="qg-audit",
        description="Find out why sampling is slow and whether configured parallelism takes effect.",
        epilog="exit codes: 0 clean, 1 findings / verification failed, 2 usage or internal error, "
        "3 target could not start (verify/profile/sweep/diagnose). Run 'qg-audit COMMAND --help'.",
    )
    p.add_argument("--version", action="version", version=f"qg-audit {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_module, help_text) in COMMANDS.items():
        sub.add_parser(name, help=help_text, add_help=False)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        parser = _top_parser()
        if not argv:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        try:
            parser.parse_args(argv)  # prints --help / --version / unknown-command errors
        except SystemExit as exc:
            return EXIT_USAGE if exc.code not in (0, None) else 0
        return EXIT_USAGE
    name, rest = argv[0], argv[1:]
    module = importlib.import_module(COMMANDS[name][0])
    parser = argparse.ArgumentParser(prog=f"qg-audit {name}", description=COMMANDS[name][1])
    module.add_arguments(parser, name) if _takes_name(module) else module.add_arguments(parser)
    try:
        args = parser.parse_args(rest)
    except SystemExit as exc:  # argparse already printed one line naming the bad flag
        return EXIT_USAGE if exc.code not in (0, None) else 0
    args.command = name
    try:
        return int(module.run(args))
    except UsageError as exc:
        from auditor.render.safe import one_line

        print(f"qg-audit {name}: error: {one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt as exc:
        # Ctrl-C, or SIGTERM / SIGHUP during a run (auditor.runtime.signals). One documented
        # code for all three (verify's contract since 0.1); stderr names the signal.
        signum = getattr(exc, "signum", 2)
        print(f"qg-audit {name}: interrupted ({_signal_name(signum)})", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`qg-audit rules | head`): no traceback, and no second
        # error when Python flushes stdout at exit. 128 + SIGPIPE, as a shell would report.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def _signal_name(signum: int) -> str:
    import signal

    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _takes_name(module) -> bool:
    return module.add_arguments.__code__.co_argcount == 2  # not inspect: 10 ms of start-up


if __name__ == "__main__":
    raise SystemExit(main())
