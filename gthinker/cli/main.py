"""The ``gthinker`` command: one subcommand per app in the registry (``gthinker mce GRAPH``,
``gthinker sm DATA QUERY``, ... : :mod:`gthinker.cli.apps` makes and runs them) and the
engine's own: ``gthinker generate`` (:mod:`gthinker.cli.generate`), ``gthinker convert``,
``gthinker stats`` (:mod:`gthinker.cli.stats`) and ``gthinker warmup``."""

from __future__ import annotations

import argparse
import atexit
import contextlib
import os
import sys
import time

from gthinker.cli import convert as convert_command
from gthinker.cli import generate as generate_command
from gthinker.cli import stats as stats_command
from gthinker.errors import GThinkerError
from gthinker.stopping import SignalStop

_WARMUP_EPILOG = """\
examples:
  gthinker warmup             # after pip install, in an image or on a shared node
  gthinker warmup --clear     # drop what is cached and compile anew

Compiled code is kept in $GTHINKER_CACHE_DIR (default: ~/.cache/gthinker on
Linux), keyed by the code, the compiler versions and this machine's CPU and GPU,
so any later process starts without compiling. Without warmup the first run of
each app compiles (it says so on stderr) and fills the cache the same way.
"""


def _add_warmup_parser(sub):
    p = sub.add_parser(
        "warmup", help="compile the bundled apps for this machine ahead of time",
        description="Compile every bundled app (CPU, and the GPU where one is usable) into "
                    "the compile cache, so that no later run compiles.",
        epilog=_WARMUP_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cpu-only", action="store_true", help="skip the GPU kernels")
    p.add_argument("--clear", action="store_true",
                   help="remove the cached code first (e.g. after editing your own apps)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines")
    p.add_argument("--portable", metavar="LEVEL", choices=list(_levels()),
                   help="build the CPU code for a portable x86-64 level "
                        f"({', '.join(_levels())}) into the package's own folder, where "
                        "every machine of that level loads it (for images and wheels)")
    p.add_argument("--part", type=_part, default=(0, 1), help=argparse.SUPPRESS)


def _part(text):
    """``I/N`` of ``--part`` (one of N processes of ``--portable``)."""
    i, _, n = text.partition("/")
    if not (i.isdigit() and n.isdigit() and int(i) < int(n)):
        raise argparse.ArgumentTypeError(f"expected I/N with I < N, got {text!r}")
    return int(i), int(n)


def _levels():
    from gthinker.compiler.cache import LEVELS

    return LEVELS


def _run_warmup(args) -> int:
    from gthinker import compiler
    from gthinker.cli.warmup import warmup

    if args.portable:
        from gthinker.cli.warmup import build_portable
        from gthinker.compiler.cache import PREBUILT

        seconds = build_portable(args.portable, quiet=args.quiet)
        print(f"built {args.portable} code in {seconds:.1f}s; in {PREBUILT}")
        return 0
    root = compiler.cache_dir()
    if args.clear:
        print(f"removed {compiler.clear()} cached entries", file=sys.stderr)
    if root is None:
        print(f"gthinker: the compile cache is off ({compiler.ENV}); warmup compiles for "
              "nothing", file=sys.stderr)

    def show(name, seconds):
        if not args.quiet:
            print(f"  {name}: {seconds:.2f}s", file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    warmup(gpu=False if args.cpu_only else None, progress=show, part=args.part)
    print(f"compiled in {time.perf_counter() - t0:.1f}s; cache: {root}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    from gthinker import __version__, registry
    from gthinker.cli import apps as app_cli

    parser = argparse.ArgumentParser(
        prog="gthinker",
        description="Parallel subgraph finding on all CPU cores, GPUs, or both.",
    )
    parser.add_argument("--version", action="version", version=f"gthinker {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    generate_command.add_parser(sub)
    for app in registry.apps().values():
        app_cli.add_parser(sub, app)
    _add_warmup_parser(sub)
    convert_command.add_parser(sub)
    stats_command.add_parser(sub)
    return parser


def program() -> None:
    """The ``gthinker`` program (its console script and ``python -m gthinker.cli.main``):
    :func:`main`, then exit with its code; a signal during the exit itself is ignored
    (seen: a SIGINT as ``convert`` finished killed the interpreter, exit -2)."""
    leave = _QuickExit()
    atexit.register(leave)  # the first registered runs last, after every other one
    leave.code = main(ending=True)
    sys.exit(leave.code)


class _QuickExit:
    """The last exit handler of the program: once the threads are joined and every other
    handler has run, the standard streams are flushed and the process ends with its code,
    without the interpreter's teardown of its modules (0.2-0.3 s after a run that loaded
    Numba, 2-core dev machine; on a GPU machine the CUDA libraries' teardown too). Nothing
    is lost: results and files are written and closed before :func:`main` returns, and a
    program that ends otherwise (an exception) exits as usual."""

    code: int | None = None

    def __call__(self) -> None:
        if self.code is None:
            return
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a closed pipe: nothing more to say
                stream.flush()
        os._exit(self.code)


def main(argv=None, *, ending: bool = False) -> int:
    """Runs one command; returns its exit code. ``ending``: the process exits right
    after (:func:`program`): signals are not handed back to the caller's handlers."""
    # SIGINT / SIGTERM stop a running job (its partial result is printed,
    # marked); elsewhere, from here on, they end the program at once with 130 / 143.
    stopper = SignalStop(ending=ending)
    try:
        with stopper:
            args = build_parser().parse_args(argv)
            if getattr(args, "quiet", False):
                from gthinker import compiler

                compiler.set_quiet(True)
            if args.command == "generate":
                return generate_command.main(args)
            if args.command == "stats":
                return stats_command.main(args)
            if args.command == "warmup":
                return _run_warmup(args)
            if args.command == "convert":
                return convert_command.main(args)
            from gthinker.cli import apps as app_cli
            from gthinker.graphs.graph import Graph

            keeping, Graph.KEEP_FORMS = Graph.KEEP_FORMS, True  # forms made go into .csr files
            try:
                return app_cli.run(args, stopper)
            finally:
                Graph.KEEP_FORMS = keeping
    except (GThinkerError, OSError, ValueError) as exc:
        if isinstance(exc, BrokenPipeError):
            return _closed_pipe()
        print(f"gthinker: error: {exc}", file=sys.stderr)
        return 2
    except (MemoryError, RuntimeError) as exc:
        # numpy's MemoryError, the core's std::bad_alloc, a thread that could not start
        # (its stack did not fit): one line, no traceback
        from gthinker import memory

        if not memory.is_exhaustion(exc):
            raise
        print(f"gthinker: error: {memory.out_of_memory(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"gthinker: {stopper.reason or 'interrupted'}", file=sys.stderr)
        return stopper.exit_code


def _closed_pipe() -> int:
    """A reader of our standard output went away (``gthinker ... | head``): end quietly,
    as other Unix tools do, with the shell's code for SIGPIPE."""
    import os

    with contextlib.suppress(OSError):  # nothing more reaches the closed pipe
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 128 + 13


if __name__ == "__main__":  # pragma: no cover
    program()
