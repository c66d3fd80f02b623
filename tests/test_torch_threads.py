"""What QG107's in-a-thread note rests on, measured on the installed torch in fresh processes.

torch keeps one intra-op thread count per process and hands it to each thread the first time
that thread runs a parallel CPU operation (or asks for the count); until then the thread's own
`set_num_threads` does not stick. So a helper thread's `torch.set_num_threads(1)` pins a main
thread that has not run such an operation yet, even one that set 2 itself, and leaves alone a
main thread that has. If a torch release changes this, the rule's message must change with it.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("torch")

SCRIPT = """
import sys, threading, torch
def pin():
    torch.set_num_threads(1)
torch.set_num_threads(2)
if sys.argv[1] == "computed":
    torch.ones(1_000_000).sin().sum()
helper = threading.Thread(target=pin)
helper.start()
helper.join()
torch.ones(1_000_000).sin().sum()
print(torch.get_num_threads())
"""


def main_thread_count(order: str) -> int:
    out = subprocess.run([sys.executable, "-c", SCRIPT, order], capture_output=True, text=True, timeout=120,
                         check=True)
    return int(out.stdout.split()[-1])


def test_a_helper_thread_pins_a_main_thread_that_has_not_computed_yet():
    assert main_thread_count("not-yet") == 1


def test_a_main_thread_that_computed_first_keeps_its_count():
    assert main_thread_count("computed") == 2
