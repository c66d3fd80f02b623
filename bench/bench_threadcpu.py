"""What verify's per-thread CPU readings cost (auditor/runtime/threadcpu.py).

    python bench/bench_threadcpu.py [--procs 8] [--threads 12] [--readings 50]

Starts PROCS real processes of THREADS sleeping threads each (a torch job's worker has 10-20:
intra-op, gloo, its import's helpers), then times ThreadMeter.read over all of them, in CPU
time of this process (the probe). verify reads once a second, so the per-reading cost over
1 s is its share of a core.
"""

import argparse
import subprocess
import sys
import time

sys.path.insert(0, __file__.rsplit("/bench/", 1)[0])

from auditor.runtime.census import ProcessRow  # noqa: E402
from auditor.runtime.procfs import read_stat  # noqa: E402
from auditor.runtime.threadcpu import ThreadMeter  # noqa: E402

CHILD = ("import threading, time\n"
         "for _ in range({n}): threading.Thread(target=time.sleep, args=(600,), daemon=True).start()\n"
         "time.sleep(600)\n")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--procs", type=int, default=8)
    p.add_argument("--threads", type=int, default=12)
    p.add_argument("--readings", type=int, default=50)
    a = p.parse_args()
    kids = [subprocess.Popen([sys.executable, "-c", CHILD.format(n=a.threads - 1)]) for _ in range(a.procs)]
    try:
        time.sleep(1.0)
        rows = []
        for k in kids:
            st = read_stat(k.pid)
            rows.append(ProcessRow(pid=st.pid, create_time=st.create_time, ppid=st.ppid, name=st.name, cmdline=[],
                                   role="worker", threads=st.threads, threads_peak=st.threads, rss_bytes=0,
                                   rss_peak=0, first_seen=0, last_seen=0, status="running"))
        meter = ThreadMeter()
        c0, w0 = time.process_time(), time.perf_counter()
        for i in range(a.readings):
            meter.read(float(i), rows)
        cpu = (time.process_time() - c0) / a.readings
        wall = (time.perf_counter() - w0) / a.readings
        threads = sum(r.threads for r in rows)
        print(f"{a.procs} processes, {threads} threads: {cpu * 1e3:.2f} ms CPU ({wall * 1e3:.2f} ms wall) a reading, "
              f"{cpu / threads * 1e6:.1f} us a thread; at one reading a second {cpu * 100:.2f}% of a core")
    finally:
        for k in kids:
            k.kill()
            k.wait()


if __name__ == "__main__":
    main()
