"""One task of bench/distributed_training.py's cluster, for either library:
`--library tensorweave` imports tensorweave, `--library tensorflow` imports
tensorflow.compat.v1 (run it with TensorFlow's Python). Both run the same
TF 1.x program: a ps serves; a worker trains a 2-layer network whose
variables sit on the ps (replica_device_setter) under
MonitoredTrainingSession for --steps steps and prints
"TIMED <steps> <seconds>" for its training loop."""

import argparse
import json
import os
import time

import numpy as np


def import_library(name):
    if name == "tensorflow":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        import tensorflow.compat.v1 as tf

        tf.disable_v2_behavior()
        return tf
    import tensorweave as tf

    return tf


def train(tf, server, cluster, task, steps, batch):
    worker_device = f"/job:worker/task:{task}"
    with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device=worker_device)):
        global_step = tf.train.get_or_create_global_step()
        x = tf.placeholder(tf.float32, [None, 64], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        w1 = tf.Variable(tf.random_normal([64, 128], stddev=0.1, seed=1), name="w1")
        b1 = tf.Variable(tf.zeros([128]), name="b1")
        w2 = tf.Variable(tf.random_normal([128, 1], stddev=0.1, seed=2), name="w2")
        hidden = tf.nn.relu(tf.matmul(x, w1) + b1)
        loss = tf.reduce_mean(tf.square(tf.matmul(hidden, w2) - y))
        train_op = tf.train.GradientDescentOptimizer(0.01).minimize(loss, global_step=global_step)
    rng = np.random.default_rng(task)
    inputs = rng.standard_normal((batch, 64)).astype(np.float32)
    targets = inputs[:, :1] * 0.5
    config = tf.ConfigProto(device_filters=["/job:ps", worker_device])
    with tf.train.MonitoredTrainingSession(
        master=server.target, is_chief=(task == 0), config=config
    ) as session:
        print("STARTED", flush=True)
        for _ in range(10):  # warm-up
            session.run(train_op, {x: inputs, y: targets})
        start = time.perf_counter()
        for _ in range(steps):
            session.run(train_op, {x: inputs, y: targets})
        elapsed = time.perf_counter() - start
    return elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", choices=["tensorweave", "tensorflow"], required=True)
    parser.add_argument("--cluster", required=True, help="the cluster as JSON")
    parser.add_argument("--job", required=True)
    parser.add_argument("--task", type=int, default=0)
    parser.add_argument("--steps", type=int, default=0)
    parser.add_argument("--batch", type=int, default=32)
    args = parser.parse_args()
    tf = import_library(args.library)
    cluster = tf.train.ClusterSpec(json.loads(args.cluster))
    server = tf.train.Server(cluster, job_name=args.job, task_index=args.task)
    print("READY", flush=True)
    if args.job == "worker":
        elapsed = train(tf, server, cluster, args.task, args.steps, args.batch)
        print("TIMED", args.steps, elapsed, flush=True)
    server.join()


if __name__ == "__main__":
    main()
