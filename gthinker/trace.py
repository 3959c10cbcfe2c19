"""``--trace FILE.png``: a timeline of where a job's time went.

Sampled every 0.1 s from the master's snapshot (CPU workers idle in W, tasks
in S) and the GPU worker's figures (busy or not, subgraphs in H, steals each
way); the GPU's busy intervals are exact. Drawn with matplotlib.
"""

from __future__ import annotations

import io
import time

from .errors import GThinkerError

__all__ = ["Tracer", "require_matplotlib"]


def require_matplotlib():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise GThinkerError("--trace draws with matplotlib: pip install matplotlib") from None


class Tracer:
    def __init__(self, threads: int, gpu_worker=None):
        require_matplotlib()
        self.threads = threads
        self.gpu = gpu_worker
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
        if self.gpu is not None:
            for a, b in self.gpu.timeline:
                ax.axvspan(a - start, b - start, color="tab:green", alpha=0.25, lw=0)
            ax.plot([], [], color="tab:green", alpha=0.5, lw=8, label="GPU busy")
        ax.set_ylabel("workers")
        ax.set_ylim(bottom=0)
        ax.legend(loc="upper right")
        ax = axes[1]
        ax.step(t, [r[2] for r in self.rows], where="post", label="tasks in S")
        if self.gpu is not None:
            ax.step(t, [r[3] for r in self.rows], where="post", label="subgraphs in H")
        ax.set_ylabel("size")
        ax.legend(loc="upper right")
        ax = axes[2]
        if self.gpu is not None:
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
                     + (" + GPU" if self.gpu is not None else "")
                     + f" ({time.strftime('%Y-%m-%d %H:%M')})")
        fig.tight_layout()
        image = io.BytesIO()
        fig.savefig(image, format="png", dpi=110)
        plt.close(fig)
        with open(path, "wb") as f:  # a full disk or a bad path raises here, not silently
            f.write(image.getvalue())
