"""Where the host's time goes in a warm run of a bundled app: the Python stacks of
every thread (GPU workers are Python threads) sampled every millisecond during one
run after a first one (compile and per-graph preparation excluded).

    python benchmarks/profile_host.py GRAPH mce --mode gpu [--top 25]
    python benchmarks/profile_host.py GRAPH count --pattern 4-clique --mode gpu
    python benchmarks/profile_host.py hprd.graph gsword --pattern QUERY.graph --repeat 200

Prints, per thread, the functions most often on top of its stack (own time) and
most often anywhere on it (cumulative), as shares of that thread's samples. Time
in compiled code or in a C call shows as the Python function that called it.
"""

from __future__ import annotations

import argparse
import collections
import sys
import threading
import time

import gthinker
from gthinker.apps import count, gsword, mce


def _where(code) -> str:
    return f"{code.co_name} ({code.co_filename.rsplit('/', 2)[-1]}:{code.co_firstlineno})"


class Sampler(threading.Thread):
    """Samples every other thread's Python stack every ``interval`` seconds."""

    def __init__(self, interval=1e-3):
        super().__init__(daemon=True)
        self.interval = interval
        self.own = collections.defaultdict(collections.Counter)
        self.total = collections.defaultdict(collections.Counter)
        self.samples = collections.Counter()
        self.running = True

    def run(self):
        names = {}
        while self.running:
            for ident, frame in sys._current_frames().items():
                if ident == self.ident:
                    continue
                if ident not in names:
                    names[ident] = next((t.name for t in threading.enumerate()
                                         if t.ident == ident), str(ident))
                name = names[ident]
                self.samples[name] += 1
                self.own[name][_where(frame.f_code)] += 1
                seen = set()
                while frame is not None:
                    w = _where(frame.f_code)
                    if w not in seen:
                        seen.add(w)
                        self.total[name][w] += 1
                    frame = frame.f_back
            time.sleep(self.interval)

    def report(self, top):
        for name, n in self.samples.most_common():
            print(f"\n== thread {name}: {n} samples")
            for title, table in (("own", self.own[name]), ("cumulative", self.total[name])):
                print(f"  -- {title}")
                for where, k in table.most_common(top):
                    print(f"  {100 * k / n:5.1f}%  {where}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("graph")
    ap.add_argument("app", choices=["mce", "count", "gsword"])
    ap.add_argument("--mode", default="gpu")
    ap.add_argument("--pattern", default="triangle", help="count's pattern, gsword's query")
    ap.add_argument("--repeat", type=int, default=1, help="runs sampled (short jobs)")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    g = gthinker.Graph.read(args.graph)
    query = gthinker.Graph.read(args.pattern) if args.app == "gsword" else None

    def once():
        if args.app == "mce":
            return mce.run(g, mode=args.mode, threads=args.threads).count
        if args.app == "gsword":
            return gsword.estimate(g, query, mode=args.mode, threads=args.threads).estimate
        return count.count(g, args.pattern, mode=args.mode, threads=args.threads).count

    print("first run (compile, preparation):", once())
    sampler = Sampler()
    sampler.start()
    t = time.perf_counter()
    for _ in range(args.repeat):
        n = once()
    dt = (time.perf_counter() - t) / args.repeat
    sampler.running = False
    sampler.join()
    print(f"sampled runs ({args.repeat}): {n}, {dt:.4f} s each")
    sampler.report(args.top)


if __name__ == "__main__":
    main()
