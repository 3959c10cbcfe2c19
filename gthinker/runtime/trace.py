"""``--trace FILE.png``: a timeline of where a job's time went.

Sampled every 0.1 s from the master's snapshot (CPU workers idle in W, tasks
in S) and the GPU workers' figures (subgraphs in H and steals each way, summed
over the devices); each GPU's busy intervals are exact, drawn one band per
device. Drawn with matplotlib.
"""

from __future__ import annotations

import io
import time

from gthinker.errors import GThinkerError

__all__ = ["Tracer", "require_matplotlib"]


def require_matplotlib():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise GThinkerError("--trace draws with matplotlib: pip install matplotlib") from None


class Tracer:
    def __init__(self, threads: int, gpu_workers=()):
        require_matplotlib()
        self.threads = threads
        self.gpus = list(gpu_workers)
        self.rows: list[tuple] = []

    def sample(self, snap: dict) -> None:
        g = snap.get("gpu", {})
        self.rows.append((
            snap["elapsed"],
            self.threads - snap.get("idle_cpu_workers", 0),
            snap["spill_tasks"],
            g.get("host_stack_records", 0),
            g.get("tasks_to_cpu", 0) + g.get("vertices_given_back", 0),
            g.get("tasks_from_cpu", 0),
        ))

    def write(self, path, start: float, seconds: float) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        t = [r[0] for r in self.rows]
        fig, axes = plt.subplots(3, 1, figsize=(10, 7), sharex=True)
        ax = axes[0]
        if self.threads:
            ax.step(t, [r[1] for r in self.rows], where="post", label="CPU workers busy")
        top = max(1, self.threads)
        for i, gpu in enumerate(self.gpus):  # device i: a band of its own at the top
            band = (top * (1 + 0.1 * i), top * (1 + 0.1 * i + 0.08))
            for a, b in gpu.timeline:
                ax.fill_between([a - start, b - start], *band, color="tab:green", alpha=0.5,
                                lw=0)
        if self.gpus:
            ax.plot([], [], color="tab:green", alpha=0.5, lw=8,
                    label="GPU busy" if len(self.gpus) == 1 else
                    f"GPU busy (one band per GPU, {len(self.gpus)})")
        ax.set_ylabel("workers")
        ax.set_ylim(0, top * (1.1 + 0.1 * len(self.gpus)))
        ax.legend(loc="center right")  # below the GPU bands
        ax = axes[1]
        ax.step(t, [r[2] for r in self.rows], where="post", label="tasks in S")
        if self.gpus:
            ax.step(t, [r[3] for r in self.rows], where="post", label="subgraphs in H")
        ax.set_ylabel("size")
        ax.legend(loc="upper right")
        ax = axes[2]
        if self.gpus:
            ax.step(t, [r[4] for r in self.rows], where="post",
                    label="GPU -> CPU (tasks + vertices)")
            ax.step(t, [r[5] for r in self.rows], where="post", label="CPU -> GPU (tasks)")
            ax.legend(loc="upper left")
        else:
            ax.text(0.5, 0.5, "no GPU worker: nothing moves between S and H",
                    ha="center", va="center", transform=ax.transAxes)
        ax.set_ylabel("moved so far")
        ax.set_xlabel("seconds")
        fig.suptitle(f"gthinker job: {seconds:.3f} s, {self.threads} CPU workers"
                     + ("" if not self.gpus else " + GPU" if len(self.gpus) == 1
                        else f" + {len(self.gpus)} GPUs")
                     + f" ({time.strftime('%Y-%m-%d %H:%M')})")
        fig.tight_layout()
        image = io.BytesIO()
        fig.savefig(image, format="png", dpi=110)
        plt.close(fig)
        with open(path, "wb") as f:  # a full disk or a bad path raises here, not silently
            f.write(image.getvalue())
