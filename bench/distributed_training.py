"""Training steps per second of a ps + 2 workers cluster on loopback, each
task its own process, for tensorweave and for TensorFlow 2.21 (its Python
is INTEROP_PYTHON, default build/interop-venv/bin/python, which
`make test-interop` makes) running the same TF 1.x program
(bench/distributed_task.py: variables on the ps, MonitoredTrainingSession
on each worker). Prints each library's cluster steps/s (both workers'
steps over the longer of their training loops) and the ratio.

Usage: PYTHONPATH=python python bench/distributed_training.py [--steps N]
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
from loopback_tasks import free_ports, read_until

TASK = str(REPO / "bench" / "distributed_task.py")
DEADLINE_SECONDS = 600


def steps_per_second(python, library, steps):
    ps_port, worker0, worker1 = free_ports(3)
    cluster = json.dumps(
        {"ps": [f"localhost:{ps_port}"], "worker": [f"localhost:{worker0}", f"localhost:{worker1}"]}
    )
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"), TF_CPP_MIN_LOG_LEVEL="2")

    def start(job, task, task_steps=0):
        argv = [python, TASK, "--library", library, "--cluster", cluster, "--job", job]
        argv += ["--task", str(task), "--steps", str(task_steps)]
        return subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env
        )

    deadline = time.monotonic() + DEADLINE_SECONDS
    processes = [start("ps", 0)]
    try:
        read_until(processes[0], "READY", deadline)
        processes.append(start("worker", 0, steps))
        read_until(processes[1], "STARTED", deadline)  # the chief initialized
        processes.append(start("worker", 1, steps))
        timings = [read_until(worker, "TIMED", deadline).split() for worker in processes[1:]]
    finally:
        for process in processes:
            process.kill()
            process.wait(timeout=15)
    total_steps = sum(int(steps) for steps, _ in timings)
    return total_steps / max(float(seconds) for _, seconds in timings)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=500, help="steps per worker")
    args = parser.parse_args()
    ours = steps_per_second(sys.executable, "tensorweave", args.steps)
    print(f"tensorweave: {ours:8.1f} steps/s (ps + 2 workers, {args.steps} steps each)")
    python = os.environ.get("INTEROP_PYTHON") or str(REPO / "build/interop-venv/bin/python")
    if not pathlib.Path(python).exists():
        print(f"TensorFlow:  not measured (no TensorFlow Python at {python})")
        return
    theirs = steps_per_second(python, "tensorflow", args.steps)
    print(f"TensorFlow:  {theirs:8.1f} steps/s")
    print(f"tensorweave / TensorFlow: {ours / theirs:.2f}x the steps per second")


if __name__ == "__main__":
    main()
