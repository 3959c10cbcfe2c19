"""Build gthinker: the Python package (its bundled apps included) and the C++ core
`gthinker._core`."""

from pybind11.setup_helpers import Pybind11Extension, build_ext
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

setup(
    packages=find_packages(include=["gthinker", "gthinker.*"]),
    ext_modules=[ext],
    cmdclass={"build_ext": build_ext},
)
