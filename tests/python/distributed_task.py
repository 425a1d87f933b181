"""One task of the ps/worker cluster tests/python/test_distributed_training.py
starts, run as its own process.

Every task prints "READY <target>" once its server runs and serves until it
is stopped. A worker given --steps also trains a linear model through its
own server for that many steps, with the variables placed on the ps by
replica_device_setter: it prints "STARTED" once its session is ready (for
the chief: once it initialized the variables) and "DONE <local steps>" at
the end, and serves on (the other workers may still need it)."""

import argparse
import json

import numpy as np
import tensorweave as tf


def train(server, cluster, task_index, steps):
    worker_device = f"/job:worker/task:{task_index}"
    with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device=worker_device)):
        global_step = tf.train.get_or_create_global_step()
        x = tf.placeholder(tf.float32, [None, 1], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        w = tf.Variable(tf.zeros([1, 1]), name="w")
        b = tf.Variable(tf.zeros([1]), name="b")
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
    inputs = np.linspace(-1, 1, 32, dtype=np.float32).reshape(-1, 1)
    targets = 3 * inputs + 0.5
    local_steps = 0
    # As TensorFlow's users do: each worker's sessions see only the ps and
    # itself, so they neither wait for nor depend on the other workers.
    config = tf.ConfigProto(device_filters=["/job:ps", worker_device])
    with tf.train.MonitoredTrainingSession(
        master=server.target, is_chief=(task_index == 0), config=config, max_wait_secs=60
    ) as session:
        print("STARTED", flush=True)
        while local_steps < steps:
            session.run(train_op, {x: inputs, y: targets})
            local_steps += 1
    return local_steps


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cluster", required=True, help="the cluster as JSON")
    parser.add_argument("--job", required=True)
    parser.add_argument("--task", type=int, required=True)
    parser.add_argument("--steps", type=int, default=0)
    args = parser.parse_args()
    cluster = tf.train.ClusterSpec(json.loads(args.cluster))
    server = tf.train.Server(cluster, job_name=args.job, task_index=args.task)
    print("READY", server.target, flush=True)
    if args.steps > 0:
        print("DONE", train(server, cluster, args.task, args.steps), flush=True)
    server.join()


if __name__ == "__main__":
    main()
