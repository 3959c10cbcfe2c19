"""Where compiled (Numba) code spends its time: perf samples mapped onto functions and
source lines.

perf cannot name the functions Numba compiles at run time. This runs a script under
``perf record``, then, in the same process, emits each compiled function of the named
modules as object code (with Numba's own target machine, so the code matches what
ran) and notes where it was loaded; ``objdump -dl`` gives its instructions and, with
debug info, their source lines. Needs ``perf`` and ``objdump`` (binutils), and reads
Numba internals (a code library's ``_codegen._tm`` and ``_final_module``; numba 0.68).

    python benchmarks/profile_numba.py --modules gthinker.apps.count.pivoter prof.py ARGS...

``prof.py`` is any script (it runs as ``__main__``); run the code to profile long
enough to dominate its compile time. Everything compiles afresh (a new compile cache
in a temporary folder). ``--lines`` compiles with ``NUMBA_DEBUGINFO=1`` for line
numbers: that code is slower (MCE on R-MAT 16: 9.1 s instead of 6.0 s) and perf's
skid moves samples onto nearby lines, so read the line shares as hints and check any
change by timing it.
"""

from __future__ import annotations

import argparse
import bisect
import collections
import importlib
import json
import os
import re
import runpy
import subprocess
import sys
import tempfile
from pathlib import Path

_FUNCTION = re.compile(r"^([0-9a-f]+) <(.+)>:$")
_SOURCE = re.compile(r"^(\S+\.py):(\d+)")
_INSTRUCTION = re.compile(r"^\s+([0-9a-f]+):\t")


def _dump_compiled(modules: list[str], folder: Path) -> None:
    """Object code and load address of every compiled overload in ``modules``."""
    found = []
    for name in modules:
        module = importlib.import_module(name)
        for attr, dispatcher in vars(module).items():
            for cres in getattr(dispatcher, "overloads", {}).values():
                lib, symbol = cres.library, cres.fndesc.llvm_func_name
                path = folder / f"obj{len(found)}.o"
                path.write_bytes(lib._codegen._tm.emit_object(lib._final_module))
                found.append({"name": f"{name}.{attr}", "symbol": symbol, "object": str(path),
                              "address": lib.get_pointer_to_function(symbol)})
    (folder / "functions.json").write_text(json.dumps(found))


def _instructions(entry) -> list[tuple[int, str | None]]:
    """(load address, "file:line" or None) of each instruction of one function."""
    listing = subprocess.run(["objdump", "-d", "-l", "--no-show-raw-insn", entry["object"]],
                             capture_output=True, text=True, check=True).stdout
    inside, start, line, out = False, 0, None, []
    for text in listing.splitlines():
        if m := _FUNCTION.match(text):
            inside = m.group(2) == entry["symbol"]
            start = int(m.group(1), 16)
        elif m := _SOURCE.match(text):
            line = f"{Path(m.group(1)).name}:{m.group(2)}"
        elif inside and (m := _INSTRUCTION.match(text)):
            out.append((int(m.group(1), 16) - start + entry["address"], line))
    return out


def _report(folder: Path, top: int) -> None:
    functions = []
    for entry in json.loads((folder / "functions.json").read_text()):
        code = _instructions(entry)
        if code:
            functions.append((code[0][0], code[-1][0] + 16, entry["name"], code))
    functions.sort()
    starts = [f[0] for f in functions]
    ips = subprocess.run(["perf", "script", "-i", str(folder / "perf.data"), "-F", "ip"],
                         capture_output=True, text=True, check=True).stdout.split()
    by_function, by_line = collections.Counter(), collections.Counter()
    for ip in map(lambda s: int(s, 16), ips):
        i = bisect.bisect_right(starts, ip) - 1
        if i < 0 or ip >= functions[i][1]:
            continue
        code = functions[i][3]
        j = bisect.bisect_right([a for a, _ in code], ip) - 1
        by_function[functions[i][2]] += 1
        by_line[code[j][1]] += 1
    inside = sum(by_function.values())
    print(f"{len(ips):,} samples, {inside:,} in the compiled functions of the modules")
    for name, n in by_function.most_common(top):
        print(f"{100 * n / max(inside, 1):6.1f}%  {name}")
    if any(line for line in by_line):
        print("\nby source line (of the samples in those functions):")
        for line, n in by_line.most_common(top):
            print(f"{100 * n / max(inside, 1):6.1f}%  {line}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--modules", required=True,
                   help="comma-separated modules whose compiled functions to look at")
    p.add_argument("--lines", action="store_true", help="compile with debug info: source lines")
    p.add_argument("--freq", type=int, default=999, help="samples per second (default 999)")
    p.add_argument("--top", type=int, default=25, help="rows to print (default 25)")
    p.add_argument("--child", help=argparse.SUPPRESS)  # the run under perf: its folder
    p.add_argument("script")
    p.add_argument("args", nargs=argparse.REMAINDER)
    a = p.parse_args(argv)
    modules = a.modules.split(",")
    if a.child:  # under perf: run the script, then dump what it compiled
        sys.argv = [a.script, *a.args]
        runpy.run_path(a.script, run_name="__main__")
        _dump_compiled(modules, Path(a.child))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = {**os.environ, "GTHINKER_CACHE_DIR": str(folder / "cache")}
        if a.lines:
            env["NUMBA_DEBUGINFO"] = "1"
        cmd = ["perf", "record", "-q", "-F", str(a.freq), "-o", str(folder / "perf.data"), "--",
               sys.executable, __file__, "--modules", a.modules, "--child", tmp, a.script,
               *a.args]
        subprocess.run(cmd, env=env, check=True)
        _report(folder, a.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
