"""The TensorFlow-style C programs of tests/c, built once against
tensorweave's headers and library (make test-c) and here against real
TensorFlow's: the wheel's include/tensorflow/c headers and its
libtensorflow_cc / libtensorflow_framework. The same source passing both ways
shows it is written against TensorFlow's C API, not ours."""

import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
PROGRAMS = ["tensorflow_program.c"]

FIND_TENSORFLOW = """
import importlib.util, pathlib
spec = importlib.util.find_spec("tensorflow")
print(next(iter(spec.submodule_search_locations)))
"""


@pytest.fixture(scope="module")
def tensorflow_dir(tf_python):
    found = subprocess.run(
        [tf_python, "-c", FIND_TENSORFLOW], capture_output=True, text=True, check=True, timeout=60
    )
    return pathlib.Path(found.stdout.strip())


@pytest.mark.parametrize("program", PROGRAMS)
def test_c_program_builds_and_runs_against_tensorflow(tensorflow_dir, tmp_path, program):
    libraries = [
        next(tensorflow_dir.glob("libtensorflow_cc.so.*")),
        next(tensorflow_dir.glob("libtensorflow_framework.so.*")),
    ]
    binary = tmp_path / program.removesuffix(".c")
    subprocess.run(
        ["cc", "-std=c99", "-Wall", "-Werror", f"-I{tensorflow_dir / 'include'}",
         str(REPO / "tests" / "c" / program), "-o", str(binary), *map(str, libraries),
         f"-Wl,-rpath,{tensorflow_dir}"],
        check=True, timeout=300,
    )  # fmt: skip
    done = subprocess.run(
        [str(binary)],
        cwd=REPO / "tests" / "c",
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert done.stdout.strip().endswith(": ok")
