"""From a scan to verify's expectation: which knobs ask for worker processes, and how many.

A knob counts when its effective value is a statically known whole number >= 1 and at
least one of its consumers is a process-parallel backend (not marked serial, not a thread
pool, not a thread-count setter) in a file the command runs (auditor.method.entry). Several
such knobs add up: verify counts the worker processes of the whole tree. Knobs whose value
is unknown are listed, never guessed. A value the command line gives to the knob's flag
(``--num-envs 2``, ``--num-envs {batch}`` once substituted) wins over the flag's default.
"""

from __future__ import annotations

from dataclasses import dataclass, field

_THREADS = ("thread", "set_num_threads", "set_num_interop_threads")


@dataclass
class Expected:
    workers: int | None  # None: the scan found nothing to verify
    knobs: list[dict] = field(default_factory=list)  # {name, effective, why, backends}
    unknown: list[str] = field(default_factory=list)  # process knobs without a static value

    @property
    def source(self) -> str:
        return "scan: " + " + ".join(f"{k['name']}={k['effective']}" for k in self.knobs)


def _process_backends(knob, entry=None) -> list[str]:
    out = []
    for site in knob.by_role("consume"):
        if entry is not None and not entry.runs(site.file):
            continue
        backend = str(site.detail.get("backend") or "")
        if not backend or site.detail.get("serial") or any(t in backend.lower() for t in _THREADS):
            continue
        if backend not in out:
            out.append(backend)
    return out


def _from_command(knob, flags: dict[str, str], entry=None) -> tuple[int, str] | None:
    """(value, why) when the command line sets the flag that defines KNOB (argparse)."""
    for site in knob.by_role("define"):
        if site.detail.get("via") != "argparse" or (entry is not None and not entry.runs(site.file)):
            continue
        for flag in site.detail.get("flags") or []:
            if flag in flags:
                try:
                    value = int(flags[flag])
                except ValueError:
                    return None
                return value, f"{value} from the command line ({flag} {flags[flag]}; default at {site.file}:{site.line})"
    return None


def expected_workers(result, entry=None, flags: dict[str, str] | None = None) -> Expected:
    """The worker count verify should see, from a joined ScanResult; with ``entry`` (what the
    command runs) only its consumers count, with ``flags`` (the command line's) its values win."""
    knobs, unknown = [], []
    for knob in result.knobs:
        backends = _process_backends(knob, entry)
        if not backends:
            continue
        v, why = knob.effective, knob.why
        given = _from_command(knob, flags or {}, entry)
        if given is not None:
            v, why = given
        if isinstance(v, bool) or not isinstance(v, int):
            unknown.append(knob.name)
            continue
        if v < 1:
            continue
        knobs.append({"name": knob.name, "effective": v, "why": why, "backends": backends,
                      "from_command": given is not None})
    total = sum(k["effective"] for k in knobs) if knobs else None
    return Expected(workers=total, knobs=knobs, unknown=unknown)
