"""Build gthinker: the Python package (its bundled apps included) and the C++ core
`gthinker._core`.

With ``GTHINKER_PREBUILD=x86-64-v3`` (a comma-separated list of the levels in
gthinker.compiler.cache.LEVELS) the build also compiles the bundled apps' CPU code for
those portable x86-64 levels into the package (gthinker/compiler/prebuilt), so that a
first run on any machine of that level compiles nothing. It runs the built package, so
it needs Numba where the build runs: ``GTHINKER_PREBUILD=x86-64-v3 pip wheel
--no-build-isolation .`` (the wheel's code is keyed by the Numba, llvmlite and NumPy
versions of that environment; elsewhere it is simply not used).
"""

import os
import sys
from pathlib import Path

from pybind11.setup_helpers import Pybind11Extension
from pybind11.setup_helpers import build_ext as pybind_build_ext
from setuptools import find_packages, setup

ext = Pybind11Extension(
    "gthinker._core",
    sorted(["csrc/bindings.cpp", "csrc/csr_kernels.cpp", "csrc/graph_bindings.cpp",
            "csrc/graph_generate.cpp",
            "csrc/master.cpp", "csrc/text_format.cpp", "csrc/text_scanner.cpp"]),
    include_dirs=["csrc"],
    cxx_std=17,
    extra_compile_args=["-O3", "-pthread"],
    extra_link_args=["-pthread"],
    depends=[
        "csrc/csr_kernels.hpp",
        "csrc/graph_generate.hpp",
        "csrc/master.hpp",
        "csrc/owned_array.hpp",
        "csrc/parallel.hpp",
        "csrc/result_writer.hpp",
        "csrc/spill_stack.hpp",
        "csrc/task_arena.hpp",
        "csrc/text_format.hpp",
        "csrc/text_scanner.hpp",
        "csrc/vertex_deque.hpp",
        "csrc/worker_context.hpp",
    ],
)



class build_ext(pybind_build_ext):  # noqa: N801 - setuptools' command name
    """Builds the core, then the portable code GTHINKER_PREBUILD asks for (see above)."""

    def run(self):
        super().run()
        levels = [x for x in os.environ.get("GTHINKER_PREBUILD", "").split(",") if x.strip()]
        if not levels:
            return
        root = Path(self.build_lib if not self.inplace else ".").resolve()
        sys.path.insert(0, str(root))
        try:
            from gthinker.cli.warmup import build_portable
        finally:
            sys.path.remove(str(root))
        for level in levels:
            seconds = build_portable(level.strip(), root / "gthinker" / "compiler" / "prebuilt")
            print(f"gthinker: built the {level.strip()} code in {seconds:.0f}s")


setup(
    packages=find_packages(include=["gthinker", "gthinker.*"]),
    package_data={"gthinker.compiler": ["prebuilt/*/*.gtc"]},
    ext_modules=[ext],
    cmdclass={"build_ext": build_ext},
)
