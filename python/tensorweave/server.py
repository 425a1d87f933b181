"""A tensorweave server as a command: one task of a cluster, serving until
SIGTERM or SIGINT, then stopping cleanly.

    python -m tensorweave.server \\
        --cluster_spec='ps=localhost:2222,worker=localhost:2223;localhost:2224' \\
        --job_name=worker --task_index=1

--cluster_spec uses the syntax of TensorFlow's old distributed examples:
jobs are separated by ',', each is `name=addresses`, and the addresses of a
job's tasks (task 0, 1, ...) are separated by ';'. The server prints its
target ("grpc://localhost:2224") on a line of its own once it serves.
"""

import argparse
import signal
import sys
import threading

from tensorweave.proto.config_pb2 import ConfigProto
from tensorweave.train.server_lib import Server


def parse_cluster_spec(text):
    """{job: [address of task 0, task 1, ...]} from 'job=a;b,job2=c'.
    Raises ValueError naming the part that does not parse."""
    cluster = {}
    for part in text.split(","):
        job_name, equals, addresses = part.partition("=")
        job_name = job_name.strip()
        if not equals or not job_name:
            raise ValueError(f"Cluster spec part {part!r} is not of the form job=host:port[;...]")
        if job_name in cluster:
            raise ValueError(f"Job {job_name!r} appears twice in the cluster spec")
        tasks = [address.strip() for address in addresses.split(";")]
        if not all(tasks):
            raise ValueError(f"Job {job_name!r} has an empty task address in {part!r}")
        cluster[job_name] = tasks
    return cluster


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m tensorweave.server",
        description="Serve one task of a cluster until SIGTERM or SIGINT.",
    )
    parser.add_argument(
        "--cluster_spec",
        required=True,
        help="jobs separated by ',', each job=host:port[;host:port...] (task 0, 1, ...)",
    )
    parser.add_argument("--job_name", required=True, help="this task's job")
    parser.add_argument("--task_index", type=int, default=0, help="this task's index in its job")
    parser.add_argument(
        "--cpus", type=int, default=0, help="CPU devices this task offers (0: the default)"
    )
    args = parser.parse_args(argv)
    try:
        cluster = parse_cluster_spec(args.cluster_spec)
    except ValueError as error:
        parser.error(str(error))
    config = None
    if args.cpus:
        config = ConfigProto(device_count={"CPU": args.cpus})

    stop_requested = threading.Event()

    def request_stop(signum, frame):
        stop_requested.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    server = Server(cluster, job_name=args.job_name, task_index=args.task_index, config=config)
    print(server.target, flush=True)
    # Waits in short slices: the handlers run on this thread between them.
    while not stop_requested.wait(0.5):
        pass
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
