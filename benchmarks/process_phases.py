"""One gthinker command run in this process, its time split into phases by sampling the
main thread's stack every millisecond (nothing in gthinker is patched or changed):

    GTHINKER_SPAWN_TIME=$(date +%s.%N) python benchmarks/process_phases.py OUT.json -- \
        count facebook_combined.txt.gz triangle -q

A sample is named by the first phase, in this order, that a frame of the stack belongs to:

  gpu init    gthinker.gpu.availability: importing numba-cuda, starting the driver,
              creating the context (where a run's mode is decided)
  cache load  gthinker.compiler.cache: compiled code loaded from the compile cache
  graph read  Graph.read / Graph.load
  imports     any import not inside the above (gthinker, numpy, numba, an app)
  arguments   building the command line's parser (the apps' declarations)
  app         the rest of the app's run: preparing, the job, its GPU side
  other       the rest (parsing, printing)

OUT.json gets those seconds, ``start`` (the parent's spawn time, from GTHINKER_SPAWN_TIME,
to this script's first line: the interpreter and its site packages) and ``main_done``
(the wall-clock time main() returned; the parent's time at the process's end minus it is
the exit: atexit handlers, threads, the CUDA driver's teardown).
The parent is benchmarks/process_overhead.py (``phases``).
"""

import json
import os
import sys
import threading
import time

STARTED = time.time()

# (phase, file path suffix, function names); gthinker's own files, found by their path
PHASES = (
    ("gpu init", "gthinker/gpu/availability.py", {"device_status", "numba_cuda"}),
    ("cache load", "gthinker/compiler/cache.py", {"load_overload"}),
    ("graph read", "gthinker/graphs/graph.py", {"read", "load"}),
    ("imports", "<frozen importlib._bootstrap>", {"_find_and_load"}),
    ("arguments", "gthinker/cli/main.py", {"build_parser"}),
    ("app", "gthinker/cli/apps.py", {"__call__"}),
)
NAMES = [p[0] for p in PHASES] + ["other"]


def classify(frame) -> str:
    found = set()
    while frame is not None:
        code = frame.f_code
        for name, suffix, functions in PHASES:
            if code.co_name in functions and code.co_filename.endswith(suffix):
                found.add(name)
        frame = frame.f_back
    return next((name for name in NAMES if name in found), "other")


class Sampler(threading.Thread):
    """Names the main thread's phase every millisecond; each gap goes to the phase seen
    at its end."""

    def __init__(self):
        super().__init__(daemon=True, name="phase-sampler")
        self.target = threading.main_thread().ident
        self.seconds = dict.fromkeys(NAMES, 0.0)
        self.running = True

    def run(self):
        last = time.perf_counter()
        while self.running:
            time.sleep(0.001)
            frame = sys._current_frames().get(self.target)  # noqa: SLF001 - documented
            now = time.perf_counter()
            self.seconds[classify(frame)] += now - last
            last = now


def main() -> None:
    out = sys.argv[1]
    argv = sys.argv[sys.argv.index("--") + 1:]
    sys.setswitchinterval(0.001)  # the sampler gets the GIL within a millisecond
    sampler = Sampler()
    sampler.start()
    t0 = time.perf_counter()
    from gthinker.cli import main as cli

    run_command = cli.main

    def timed(*args, **kwargs):  # the command; its phases written as it returns
        code = run_command(*args, **kwargs)
        sampler.running = False
        sampler.join()
        spawn = float(os.environ.get("GTHINKER_SPAWN_TIME", STARTED))
        record = {"start": STARTED - spawn, "main": time.perf_counter() - t0,
                  "phases": sampler.seconds, "code": code}
        with open(out, "w") as fh:
            json.dump(record | {"main_done": time.time()}, fh)
        return code

    cli.main = timed
    sys.argv = ["gthinker", *argv]
    cli.program()  # exits as the gthinker command does


if __name__ == "__main__":
    main()
