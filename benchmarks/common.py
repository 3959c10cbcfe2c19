"""Helpers shared by the benchmark scripts."""

from __future__ import annotations

import subprocess
from pathlib import Path


def rmat_file(workdir, scale, edge_factor, a, b, c, seed=1):
    """Generates (once) an R-MAT edge list with ``gthinker generate rmat``, as the
    issues ask; returns ``(path, name, command)``."""
    work = Path(workdir)
    work.mkdir(parents=True, exist_ok=True)
    path = work / f"rmat_s{scale}_ef{edge_factor}_a{a}_b{b}_c{c}.txt"
    cmd = ["gthinker", "generate", "rmat", "--scale", str(scale), "--edge-factor",
           str(edge_factor), "--a", str(a), "--b", str(b), "--c", str(c), "--seed", str(seed),
           "-o", str(path)]
    if not path.exists():
        subprocess.run(cmd, check=True)
    name = f"R-MAT s{scale} ef{edge_factor} a={a} b={b} c={c} seed {seed}"
    return path, name, " ".join(cmd)
