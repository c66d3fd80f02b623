"""The fixed-order diagnosis: environment, then the trainer's wait, then forward + transfer.

(1) Is the environment step the main cost of a sampling step? Then check how the
    environment is called and whether its parallelism took effect (qg-audit verify), not
    batch size.
(2) Is training really waiting for samples? With a low wait ratio the trainer is the
    bottleneck: stop tuning sampling.
(3) Only if forward pass and transfer dominate: tune batch size one variable at a time
    (qg-audit sweep), then parallelism.

All three steps are always evaluated and printed in this order, each with its numbers.
The conclusion takes the first that applies in the order trainer-bound, env-bound,
forward-transfer-bound: a trainer that does not wait makes every sampling change moot, so
step (2) overrides step (1)'s advice when both fire.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

ENV_PHASES = ("env", "env_step", "environment")
FORWARD_PHASES = ("fwd", "forward", "policy", "inference")
TRANSFER_PHASES = ("xfer", "transfer", "send", "queue", "put")


@dataclass
class Thresholds:
    """Documented, configurable (flags or ``[tool.qg-audit.profile]``) decision thresholds."""

    env_share: float = 0.5  # env phases / step time at or above this: env-bound
    wait_low: float = 0.2  # wait-ratio p50 below this: the trainer does not wait (trainer-bound)
    fx_share: float = 0.5  # (forward + transfer) / step time at or above this: forward/transfer-bound
    spike_factor: float = 3.0  # a step slower than this x its timer's median is a spike
    env_phases: list[str] = field(default_factory=lambda: list(ENV_PHASES))
    forward_phases: list[str] = field(default_factory=lambda: list(FORWARD_PHASES))
    transfer_phases: list[str] = field(default_factory=lambda: list(TRANSFER_PHASES))

    @classmethod
    def keys(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    def validate(self) -> None:
        for name in ("env_share", "wait_low", "fx_share"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not 0 <= v <= 1:
                raise ValueError(f"{name} must be a number between 0 and 1, got {v!r}")
        if not isinstance(self.spike_factor, (int, float)) or self.spike_factor <= 1:
            raise ValueError(f"spike_factor must be a number > 1, got {self.spike_factor!r}")
        for name in ("env_phases", "forward_phases", "transfer_phases"):
            v = getattr(self, name)
            if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
                raise ValueError(f"{name} must be a list of phase names")


def _share(prof, names) -> tuple[float, float, list[str]]:
    """(mean ms per step, share of step time, phases matched) for the given phase names."""
    got = [p for p in prof.phases if p.name in names]
    return sum(p.mean_ms for p in got), sum(p.share for p in got), [p.name for p in got]


def _pct(x: float) -> str:
    return f"{x:.0%}"


def diagnose(prof, th: Thresholds) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    step_ms = prof.step.mean_ms
    steps = []

    # (1) environment
    env_ms, env_share, env_names = _share(prof, th.env_phases)
    if not prof.steps:
        steps.append(_d(1, "unknown", "no sampling steps recorded: time the sampler with "
                                      "SamplingTimer.phase('env'/'fwd'/'xfer') and step()"))
    elif not env_names:
        steps.append(_d(1, "unknown", f"no environment phase (one of {', '.join(th.env_phases)}) "
                                      "was timed: cannot tell whether the environment step is the main cost"))
    elif env_share >= th.env_share:
        steps.append(_d(1, "env-bound",
                        f"environment step is the main cost: {'+'.join(env_names)} {env_ms:.2f} ms of "
                        f"{step_ms:.2f} ms per step ({_pct(env_share)} >= {_pct(th.env_share)}) -> check how the "
                        "environment is called and whether its parallelism took effect "
                        "(qg-audit verify -- COMMAND), not batch size"))
    else:
        steps.append(_d(1, "not-env-bound",
                        f"environment step is not the main cost: {'+'.join(env_names)} {env_ms:.2f} ms of "
                        f"{step_ms:.2f} ms per step ({_pct(env_share)} < {_pct(th.env_share)})"))

    # (2) is training waiting?
    w = prof.wait
    if w is None:
        steps.append(_d(2, "unknown", "no trainer records: cannot tell whether training waits for samples; "
                                      "time the trainer with SamplingTimer.wait() and compute()"))
    elif w.ratio_p50 < th.wait_low:
        steps.append(_d(2, "trainer-bound",
                        f"training is not waiting for samples: wait ratio p50 {_pct(w.ratio_p50)} "
                        f"(mean {_pct(w.ratio_mean)}, p95 {_pct(w.ratio_p95)} over {w.windows} window(s)) "
                        f"< {_pct(th.wait_low)}; wait {w.wait_ms_mean:.2f} ms vs compute {w.compute_ms_mean:.2f} ms "
                        "per trainer step -> the trainer is the bottleneck: stop tuning sampling"))
    else:
        steps.append(_d(2, "sampling-bound",
                        f"training waits for samples: wait ratio p50 {_pct(w.ratio_p50)} "
                        f"(mean {_pct(w.ratio_mean)}, p95 {_pct(w.ratio_p95)} over {w.windows} window(s)) "
                        f">= {_pct(th.wait_low)}; wait {w.wait_ms_mean:.2f} ms vs compute "
                        f"{w.compute_ms_mean:.2f} ms per trainer step -> sampling is the bottleneck"))

    # (3) forward + transfer
    fx_ms, fx_share, fx_names = _share(prof, list(th.forward_phases) + list(th.transfer_phases))
    if not prof.steps or not fx_names:
        steps.append(_d(3, "unknown", "no forward/transfer phase (" + ", ".join(th.forward_phases + th.transfer_phases)
                                      + ") was timed"))
    elif fx_share >= th.fx_share:
        steps.append(_d(3, "forward-transfer-bound",
                        f"forward and transfer dominate: {'+'.join(fx_names)} {fx_ms:.2f} ms of {step_ms:.2f} ms "
                        f"per step ({_pct(fx_share)} >= {_pct(th.fx_share)}) -> tune batch size one variable at a "
                        "time (qg-audit sweep -L batch_size ...), then parallelism"))
    else:
        steps.append(_d(3, "not-forward-transfer-bound",
                        f"forward and transfer do not dominate: {'+'.join(fx_names)} {fx_ms:.2f} ms of "
                        f"{step_ms:.2f} ms per step ({_pct(fx_share)} < {_pct(th.fx_share)}) -> batch size is not "
                        "the lever"))

    verdicts = [s["verdict"] for s in steps]
    if verdicts[1] == "trainer-bound":  # the sampling advice of steps 1 and 3 is moot; say so on their lines
        if verdicts[0] == "env-bound":
            steps[0]["message"] += " (moot while the trainer does not wait, step 2)"
        if verdicts[2] == "forward-transfer-bound":
            steps[2]["message"] += (" (moot while the trainer does not wait, step 2; a transfer that blocks on a "
                                    "full queue is time spent waiting for the trainer)")
    if verdicts[1] == "trainer-bound":
        branch, msg = "trainer-bound", "the trainer is the bottleneck (step 2): stop tuning sampling"
        if verdicts[0] == "env-bound":
            msg += "; the environment step is the main sampling cost, to revisit once training waits"
    elif verdicts[0] == "env-bound":
        branch, msg = "env-bound", "the environment step is the bottleneck (step 1): run qg-audit verify"
    elif verdicts[2] == "forward-transfer-bound":
        branch, msg = "forward-transfer-bound", ("forward and transfer dominate (step 3): qg-audit sweep one "
                                                 "variable at a time, batch size first")
    else:
        branch, msg = "inconclusive", "no step applies; see the phase table and the untimed share"
    if verdicts[1] == "unknown" and branch != "inconclusive":
        msg += " (unconfirmed: training's wait was not measured)"
    return steps, {"branch": branch, "message": msg}


def _d(step: int, verdict: str, message: str) -> dict[str, Any]:
    return {"step": step, "verdict": verdict, "message": message}
