"""Interop with real TensorFlow: servers and clients of TensorFlow 2.x run in
a separate Python (a virtualenv with tensorflow-cpu, never a dependency of
tensorweave), as subprocesses started and killed by pid by each test.

`make test-interop` creates the virtualenv (INTEROP_VENV, default
build/interop-venv) and runs these tests with INTEROP_PYTHON pointing at its
Python and INTEROP_REQUIRED=1, so a missing TensorFlow fails the run instead
of skipping it. Run by hand:

    INTEROP_PYTHON=/work/tfvenv/bin/python python3 -m pytest -q tests/interop
"""

import json
import os
import pathlib
import queue
import subprocess
import sys
import threading

import pytest

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
PACKAGE_ROOT = REPO / "python"
if str(PACKAGE_ROOT) not in sys.path:
    sys.path.insert(0, str(PACKAGE_ROOT))
C_API_TESTS = REPO / "tests" / "c_api"
if str(C_API_TESTS) not in sys.path:
    sys.path.insert(0, str(C_API_TESTS))

import tensorweave as tf

# TensorFlow takes seconds to import; on a busy machine, many.
STARTUP_SECONDS = 120
STOP_SECONDS = 15


@pytest.fixture(autouse=True)
def fresh_default_graph():
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()


@pytest.fixture(scope="session")
def tf_python():
    """The Python that has tensorflow (INTEROP_PYTHON)."""
    python = os.environ.get("INTEROP_PYTHON")
    if not python or not pathlib.Path(python).exists():
        message = (
            "INTEROP_PYTHON is not set to a Python with tensorflow (make test-interop sets it)"
        )
        if os.environ.get("INTEROP_REQUIRED") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return python


class Process:
    """A subprocess whose stdout is read line by line without blocking the
    test: every read has a timeout. Killed by pid on close."""

    def __init__(self, argv, env=None):
        self.argv = argv
        self.popen = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self._lines = queue.Queue()
        self._stderr = []
        threading.Thread(target=self._pump_stdout, daemon=True).start()
        threading.Thread(target=self._pump_stderr, daemon=True).start()

    def _pump_stdout(self):
        for line in self.popen.stdout:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def _pump_stderr(self):
        for line in self.popen.stderr:
            self._stderr.append(line)

    def stderr(self):
        return "".join(self._stderr[-40:])

    def read_line(self, timeout):
        """The next stdout line; fails the test on timeout or exit."""
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"no output from {self.argv} within {timeout} s:\n{self.stderr()}")
        if line is None:
            self.popen.wait(timeout=STOP_SECONDS)
            pytest.fail(
                f"{self.argv} exited ({self.popen.returncode}) before answering:\n{self.stderr()}"
            )
        return line

    def close(self):
        if self.popen.poll() is None:
            self.popen.kill()
            self.popen.wait(timeout=STOP_SECONDS)


@pytest.fixture
def processes():
    """Starts processes for a test and kills them (by pid) after it."""
    started = []

    def start(argv, env=None):
        process = Process(argv, env)
        started.append(process)
        return process

    yield start
    for process in started:
        process.close()


@pytest.fixture
def tf_server(tf_python, processes):
    """A TensorFlow server (tf.distribute.Server, job localhost, one task) on
    localhost at a free port; its target."""
    process = processes([tf_python, str(HERE / "tf_server.py")], env=_quiet_tf_env())
    target = process.read_line(STARTUP_SECONDS)
    assert target.startswith("grpc://localhost:"), target
    return target


@pytest.fixture
def tw_server(processes):
    """A tensorweave server (`python -m tensorweave.server`, job localhost,
    one task) on localhost at a free port; its target."""
    env = dict(os.environ, PYTHONPATH=str(PACKAGE_ROOT))
    process = processes(
        [
            sys.executable,
            "-m",
            "tensorweave.server",
            "--cluster_spec=localhost=localhost:0",
            "--job_name=localhost",
        ],
        env=env,
    )
    target = process.read_line(STARTUP_SECONDS)
    assert target.startswith("grpc://localhost:"), target
    return target


@pytest.fixture
def tf_client(tf_python, processes):
    """Runs a scenario of tests/interop/tf_client.py (TensorFlow's
    tf.compat.v1.Session) against a target; returns its JSON result."""

    def run(target, scenario):
        process = processes(
            [tf_python, str(HERE / "tf_client.py"), target, scenario], env=_quiet_tf_env()
        )
        return json.loads(process.read_line(STARTUP_SECONDS))

    return run


def _quiet_tf_env():
    return dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")
