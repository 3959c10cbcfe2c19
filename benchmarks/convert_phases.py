"""The steps of `gthinker convert GRAPH OUT.csr` (default prepared forms) in one process:
each step's seconds and peak memory (VmHWM, reset before each step through
/proc/self/clear_refs; Linux only), against the size of the CSR (issue 33: convert's peak
<= 2x the CSR).

    PYTHONPATH=TREE python benchmarks/convert_phases.py GRAPH OUT.csr"""
import sys
import time
from pathlib import Path


def status(key: str) -> float:
    """A /proc/self/status field in MiB."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key):
                return int(line.split()[1]) / 1024
    raise KeyError(key)


def step(name: str, fn):
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # peak RSS := current RSS
    t0 = time.perf_counter()
    out = fn()
    print(f"{name:11s} {time.perf_counter() - t0:7.2f} s  peak {status('VmHWM'):7.0f} MiB  "
          f"after {status('VmRSS'):7.0f} MiB", flush=True)
    return out


from gthinker import Graph  # noqa: E402
from gthinker.cli.convert import DEFAULT_FORMS, write_out  # noqa: E402

print(f"{'imported':11s} {'':9s}  rss  {status('VmRSS'):7.0f} MiB")
src, out = Path(sys.argv[1]), Path(sys.argv[2])
g = step("read", lambda: Graph.read(src))
print(f"CSR {(g.indptr.nbytes + g.indices.nbytes) / 2**20:,.0f} MiB "
      f"({g.num_vertices:,} vertices, {g.num_edges:,} edges)")
step("degeneracy", g.degeneracy_order)
step("oriented", g.oriented)
step("write", lambda: write_out(g, out, "binary", DEFAULT_FORMS))
