"""The runtime: a job (``job``: the master, CPU workers and GPU workers of one run),
the Task API the CPU workers call (``task``), an app's request that runs here or on a
cluster (``request``), results streamed out of a job (``stream``) and written to
files (``outputs``), Numba passes in short steps on all cores (``steps``) and the
timeline of a run (``trace``)."""
