"""The swept variable: ``-L NAME v1,v2,...`` or ``-P NAME MIN MAX [-D STEP]``, and ``{NAME}``.

Exactly one variable, as in hyperfine's ``--parameter-list`` / ``--parameter-scan``. ``-D``
takes an additive step (``-D 8``: 8, 16, 24 ...) or a multiplicative one (``-D x2``: 8, 16,
32 ...), since batch sizes are usually swept in doublings. Every mistake is a UsageError
(exit 2) that names the flag and the way out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from auditor.exitcodes import UsageError

MAX_VALUES = 100  # a scan longer than this is almost always a wrong -D; say so instead of running for hours
NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Variable:
    name: str
    values: list[str]  # as substituted into the command, in sweep order
    source: str  # "-L" or "-P"

    @property
    def placeholder(self) -> str:
        return "{" + self.name + "}"

    def numeric(self) -> list[float] | None:
        """The values as numbers, or None when any is not a number (e.g. -L dtype fp16,bf16)."""
        try:
            return [float(v) for v in self.values]
        except ValueError:
            return None


def _check_name(name: str, flag: str) -> str:
    if not NAME_RE.fullmatch(name):
        raise UsageError(f"{flag} {name!r}: the variable name must be an identifier such as 'batch' "
                         "(it is substituted as {NAME} in the command)")
    return name


def _number(text: str, flag: str, what: str) -> Decimal:
    try:
        d = Decimal(text)
    except InvalidOperation:
        raise UsageError(f"{flag}: {what} {text!r} is not a number") from None
    if not d.is_finite():
        raise UsageError(f"{flag}: {what} {text!r} is not a finite number")
    return d


def _fmt(d: Decimal) -> str:
    """16 -> '16', 0.50 -> '0.5': values are passed to the command as typed by a person."""
    if d == d.to_integral_value():
        return str(int(d))
    return format(d.normalize(), "f")


def parse_list(name: str, text: str) -> Variable:
    name = _check_name(name, "-L")
    values = [v.strip() for v in text.split(",")]
    if not text.strip() or any(v == "" for v in values):
        raise UsageError(f"-L {name} {text!r}: give a comma-separated list of values without empty items, "
                         f"e.g. -L {name} 16,32,64")
    dupes = sorted({v for v in values if values.count(v) > 1})
    if dupes:
        raise UsageError(f"-L {name}: value(s) {', '.join(dupes)} appear more than once; list each value once "
                         "and use --runs R for repeated runs")
    return Variable(name, values, "-L")


def parse_scan(name: str, lo: str, hi: str, step: str | None) -> Variable:
    name = _check_name(name, "-P")
    a, b = _number(lo, "-P", "MIN"), _number(hi, "-P", "MAX")
    if a > b:
        raise UsageError(f"-P {name} {lo} {hi}: MIN is greater than MAX")
    values: list[Decimal] = []
    step_text = "1" if step is None else step.strip()
    if step_text[:1] in ("x", "*"):
        factor = _number(step_text[1:], "-D", "factor")
        if factor <= 1:
            raise UsageError(f"-D {step}: a multiplicative step must be greater than 1 (e.g. -D x2)")
        if a <= 0:
            raise UsageError(f"-P {name} {lo} {hi} -D {step}: a multiplicative scan needs MIN > 0")
        v = a
        while v <= b and len(values) <= MAX_VALUES:
            values.append(v)
            v *= factor
    else:
        inc = _number(step_text, "-D", "step")
        if inc <= 0:
            raise UsageError(f"-D {step}: the step must be greater than 0 (or xF for a factor, e.g. -D x2)")
        if (a != a.to_integral_value() or b != b.to_integral_value() or inc != inc.to_integral_value()) \
                and step is None:
            raise UsageError(f"-P {name} {lo} {hi}: decimal bounds need an explicit step, e.g. -D 0.1")
        v = a
        while v <= b and len(values) <= MAX_VALUES:
            values.append(v)
            v += inc
    if len(values) > MAX_VALUES:
        raise UsageError(f"-P {name} {lo} {hi}" + (f" -D {step}" if step else "") +
                         f": more than {MAX_VALUES} values; choose a larger step (-D) or a multiplicative one (-D x2)")
    return Variable(name, [_fmt(v) for v in values], "-P")


def from_args(lists: list[list[str]] | None, scans: list[list[str]] | None, step: str | None) -> Variable:
    """The one variable from argparse's appended -L / -P occurrences."""
    given = [("-L", x) for x in lists or []] + [("-P", x) for x in scans or []]
    if not given:
        raise UsageError("no variable to sweep: give -L NAME v1,v2,... or -P NAME MIN MAX [-D STEP]")
    if len(given) > 1:
        shown = ", ".join(f"{flag} {vals[0]}" for flag, vals in given)
        raise UsageError(f"sweep varies exactly one variable, got {len(given)} ({shown}); change one thing at a "
                         "time and run one sweep per variable")
    flag, vals = given[0]
    if flag == "-L":
        if step is not None:
            raise UsageError("-D STEP applies to -P NAME MIN MAX only")
        return parse_list(vals[0], vals[1])
    return parse_scan(vals[0], vals[1], vals[2], step)


def check_template(command: list[str], var: Variable) -> None:
    if not command:
        raise UsageError(f"no command: give -- COMMAND ... with {var.placeholder} where the value goes")
    if not any(var.placeholder in arg for arg in command):
        raise UsageError(f"the command never uses {var.placeholder}: every value would run the same command; "
                         f"put {var.placeholder} where the value goes, e.g. -- python sampler.py --batch {var.placeholder}")


def substitute(command: list[str], var: Variable, value: str) -> list[str]:
    """The command for one value: every ``{NAME}`` inside every argument is replaced."""
    return [arg.replace(var.placeholder, value) for arg in command]
