"""Starts a TensorFlow server (tf.distribute.Server) for the interop tests.

Run with the interop virtualenv's Python (the one with tensorflow-cpu):

    python tests/interop/tf_server.py [--port N]

It serves one task, /job:localhost/task:0, on localhost (port 0 picks a
free one), prints its target ("grpc://localhost:<port>") on a line of its
own, and serves until it is killed.
"""

import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    cluster = tf.train.ClusterSpec({"localhost": [f"localhost:{args.port}"]})
    server = tf.distribute.Server(cluster, job_name="localhost", task_index=0, start=True)
    print(server.target.decode() if isinstance(server.target, bytes) else server.target)
    sys.stdout.flush()
    server.join()


if __name__ == "__main__":
    main()
