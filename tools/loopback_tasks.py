"""Helpers for tests and benchmarks that run task processes (tensorweave or
TensorFlow servers, training tasks) on loopback ports.

    ports = free_ports(3)
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rest = read_until(process, "READY", time.monotonic() + 120)
"""

import socket
import time


def free_ports(count):
    """`count` distinct loopback ports nothing listens on right now (all
    held open at once, so no two are the same)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def read_until(process, prefix, deadline):
    """The rest (stripped) of the first stdout line of `process` that starts
    with `prefix`. RuntimeError, after killing the process, when it ends or
    `deadline` (time.monotonic()) passes first; the message carries the end
    of its stderr when that is a pipe."""
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        if line.startswith(prefix):
            return line[len(prefix) :].strip()
    process.kill()
    stderr = process.stderr.read()[-3000:] if process.stderr is not None else ""
    raise RuntimeError(f"the task printed no '{prefix}' line; stderr:\n{stderr}")
