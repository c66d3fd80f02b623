"""GPU memory peaks through NVML (nvidia-ml-py, the optional extra ``nvml``).

Small and defensive on purpose: no NVML, no driver or no device means ``open()`` returns
None and every GPU figure is null ("n/a"), never a made-up number. Any NVML error during a
run ends GPU sampling for that run (the figure so far is kept, and a note says why).

Which memory counts: the memory NVML lists for the target's own processes (pid in the
census tree). When NVML lists none of them - typical in a container, where NVML shows host
pids - the figure is the device's used memory minus what was used just before the run
started, and the basis says so, since other jobs on the same GPU would count too.
"""

from __future__ import annotations


class GpuProbe:
    def __init__(self, nvml, handles):
        self._nvml = nvml
        self._handles = handles
        self.total_bytes = sum(int(nvml.nvmlDeviceGetMemoryInfo(h).total) for h in handles)
        self.names = [_text(nvml.nvmlDeviceGetName(h)) for h in handles]

    @classmethod
    def open(cls) -> "GpuProbe | None":
        try:
            import pynvml as nvml
        except ImportError:
            return None
        try:
            nvml.nvmlInit()
        except Exception:  # NVMLError_LibraryNotFound, DriverNotLoaded ...: no GPU here
            return None
        try:
            count = int(nvml.nvmlDeviceGetCount())
            if count < 1:
                nvml.nvmlShutdown()
                return None
            return cls(nvml, [nvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)])
        except Exception:
            _shutdown(nvml)
            return None

    def device_used(self) -> int:
        return sum(int(self._nvml.nvmlDeviceGetMemoryInfo(h).used) for h in self._handles)

    def used_by(self, pids: set[int]) -> int | None:
        """Bytes NVML attributes to these pids, or None when it lists none of them."""
        total, seen = 0, False
        for h in self._handles:
            procs = []
            for getter in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses"):
                try:
                    procs += list(getattr(self._nvml, getter)(h))
                except Exception:
                    continue
            for p in procs:
                if p.pid in pids:
                    seen = True
                    total += int(p.usedGpuMemory or 0)  # None where the driver will not say
        return total if seen else None

    def run_tracker(self) -> "GpuTracker":
        return GpuTracker(self)

    def close(self) -> None:
        _shutdown(self._nvml)


class GpuTracker:
    """The peak for one run; ``sample(pids)`` is called at every census poll."""

    def __init__(self, probe: GpuProbe):
        self.probe = probe
        self.peak_process: int | None = None
        self.peak_delta = 0
        self.error: str | None = None
        try:
            self.baseline = probe.device_used()
        except Exception as exc:
            self.baseline, self.error = None, f"NVML: {exc}"

    def sample(self, pids: set[int]) -> None:
        if self.error:
            return
        try:
            used = self.probe.used_by(pids)
            if used is not None:
                self.peak_process = max(self.peak_process or 0, used)
            if self.baseline is not None:
                self.peak_delta = max(self.peak_delta, self.probe.device_used() - self.baseline)
        except Exception as exc:
            self.error = f"NVML: {exc}"

    @property
    def basis(self) -> str | None:
        if self.baseline is None and self.peak_process is None:
            return None
        return "process" if self.peak_process is not None else "device-delta"

    @property
    def peak_bytes(self) -> int | None:
        if self.peak_process is not None:
            return self.peak_process
        return self.peak_delta if self.baseline is not None else None


def _text(x) -> str:
    return x.decode() if isinstance(x, bytes) else str(x)


def _shutdown(nvml) -> None:
    try:
        nvml.nvmlShutdown()
    except Exception:
        pass
