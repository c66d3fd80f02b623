"""From a scan to verify's expectation: which knobs ask for worker processes, and how many.

A knob counts when its effective value is a statically known whole number >= 1 and at
least one of its consumers is a process-parallel backend (not marked serial, not a thread
pool, not a thread-count setter). Several such knobs add up: verify counts the worker
processes of the whole tree. Knobs whose value is unknown are listed, never guessed.
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


def _process_backends(knob) -> list[str]:
    out = []
    for site in knob.by_role("consume"):
        backend = str(site.detail.get("backend") or "")
        if not backend or site.detail.get("serial") or any(t in backend.lower() for t in _THREADS):
            continue
        if backend not in out:
            out.append(backend)
    return out


def expected_workers(result) -> Expected:
    """The worker count verify should see, from a joined ScanResult."""
    knobs, unknown = [], []
    for knob in result.knobs:
        backends = _process_backends(knob)
        if not backends:
            continue
        v = knob.effective
        if isinstance(v, bool) or not isinstance(v, int):
            unknown.append(knob.name)
            continue
        if v < 1:
            continue
        knobs.append({"name": knob.name, "effective": v, "why": knob.why, "backends": backends})
    total = sum(k["effective"] for k in knobs) if knobs else None
    return Expected(workers=total, knobs=knobs, unknown=unknown)
