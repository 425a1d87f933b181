"""A ps task and two worker tasks, each its own process on loopback, train
one linear model together: the variables live on the ps, each worker runs
its steps through its own server, and the shared global step ends at the
sum of the workers' steps. Every process is stopped by pid; every wait is
bounded."""

import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorweave as tf
from loopback_tasks import free_ports, read_until

TASK_SCRIPT = os.path.join(os.path.dirname(__file__), "distributed_task.py")
STEPS_PER_WORKER = 200
DEADLINE_SECONDS = 120


def start_task(cluster, job, task, steps=0, env=None):
    env = dict(os.environ, **(env or {}))
    env["PYTHONPATH"] = os.pathsep.join(
        [
            os.path.join(os.path.dirname(__file__), "..", "..", "python"),
            env.get("PYTHONPATH", ""),
        ]
    )
    return subprocess.Popen(
        [
            sys.executable,
            TASK_SCRIPT,
            "--cluster",
            json.dumps(cluster),
            "--job",
            job,
            "--task",
            str(task),
            "--steps",
            str(steps),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


@pytest.fixture
def cluster_processes():
    processes = []
    yield processes
    for process in processes:
        process.kill()
        process.wait(timeout=10)


def test_ps_and_two_workers_share_variables_and_global_step(cluster_processes):
    ps_port, worker0_port, worker1_port = free_ports(3)
    cluster = {
        "ps": [f"localhost:{ps_port}"],
        "worker": [f"localhost:{worker0_port}", f"localhost:{worker1_port}"],
    }
    deadline = time.monotonic() + DEADLINE_SECONDS
    ps = start_task(cluster, "ps", 0)
    cluster_processes.append(ps)
    chief = start_task(cluster, "worker", 0, STEPS_PER_WORKER)
    cluster_processes.append(chief)
    read_until(chief, "STARTED", deadline)
    # The second worker starts once the chief has initialized the variables,
    # so its session is ready at once (a non-chief that finds them
    # uninitialized polls every 30 s, as TensorFlow's does); the two then
    # train at the same time.
    other = start_task(cluster, "worker", 1, STEPS_PER_WORKER)
    cluster_processes.append(other)
    workers = [chief, other]
    done = [int(read_until(worker, "DONE", deadline)) for worker in workers]
    assert done == [STEPS_PER_WORKER, STEPS_PER_WORKER]

    # A third client reads the shared state from the ps through the ps's own
    # master: same variable names, no initialization.
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            global_step = tf.train.get_or_create_global_step()
            w = tf.Variable(tf.zeros([1, 1]), name="w")
            b = tf.Variable(tf.zeros([1]), name="b")
        with tf.Session(f"grpc://localhost:{ps_port}") as session:
            step, w_value, b_value = session.run([global_step, w, b])
    assert step == 2 * STEPS_PER_WORKER
    # 400 steps of gradient descent found the line y = 3x + 0.5.
    np.testing.assert_allclose(np.squeeze(w_value), 3.0, atol=1e-2)
    np.testing.assert_allclose(np.squeeze(b_value), 0.5, atol=1e-2)
