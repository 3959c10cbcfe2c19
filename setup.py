"""Build gthinker: the Python package, the bundled apps and the C++ core `gthinker._core`."""

from pybind11.setup_helpers import Pybind11Extension, build_ext
from setuptools import setup

ext = Pybind11Extension(
    "gthinker._core",
    sorted(["csrc/bindings.cpp", "csrc/master.cpp"]),
    include_dirs=["csrc"],
    cxx_std=17,
    extra_compile_args=["-O3", "-pthread"],
    extra_link_args=["-pthread"],
    depends=[
        "csrc/master.hpp",
        "csrc/result_writer.hpp",
        "csrc/spill_stack.hpp",
        "csrc/task_arena.hpp",
        "csrc/vertex_deque.hpp",
        "csrc/worker_context.hpp",
    ],
)

setup(
    packages=["gthinker", "gthinker.gpu", "gthinker.nx_backend", "gthinker.cluster",
              "gthinker.apps"],
    package_dir={"gthinker": "gthinker", "gthinker.apps": "apps"},
    ext_modules=[ext],
    cmdclass={"build_ext": build_ext},
)
