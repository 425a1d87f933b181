"""Headers where TensorFlow programs look for them: `make install` lays out
include/tensorflow/c/*.h, lib/libtensorweave.so (+ libtensorflow.so) and
relocatable pkg-config files, and the wheel carries the same headers and a
.pc; a TensorFlow-style C program builds from pkg-config's flags alone."""

import importlib.util
import os
import pathlib
import shutil
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1].parent
HEADERS = ["c_api.h", "tf_datatype.h", "tf_status.h", "tf_buffer.h", "tf_tensor.h", "tf_tstring.h"]

PROGRAM = r"""
#include <stdio.h>
#include <string.h>
#include <tensorflow/c/c_api.h>

int main(void) {
  TF_Status* status = TF_NewStatus();
  TF_Graph* graph = TF_NewGraph();
  TF_OperationDescription* d = TF_NewOperation(graph, "Placeholder", "x");
  TF_SetAttrType(d, "dtype", TF_FLOAT);
  TF_Operation* x = TF_FinishOperation(d, status);
  if (TF_GetCode(status) != TF_OK) return 1;
  d = TF_NewOperation(graph, "Square", "y");
  TF_Output in = {x, 0};
  TF_AddInput(d, in);
  TF_Operation* y = TF_FinishOperation(d, status);
  TF_SessionOptions* options = TF_NewSessionOptions();
  TF_Session* session = TF_NewSession(graph, options, status);
  int64_t dims[1] = {2};
  TF_Tensor* feed = TF_AllocateTensor(TF_FLOAT, dims, 1, 2 * sizeof(float));
  float values[2] = {3.0f, -4.0f};
  memcpy(TF_TensorData(feed), values, sizeof values);
  TF_Output out = {y, 0};
  TF_Tensor* result = NULL;
  TF_SessionRun(session, NULL, &in, &feed, 1, &out, &result, 1, NULL, 0, NULL, status);
  if (TF_GetCode(status) != TF_OK) return 2;
  const float* squares = (const float*)TF_TensorData(result);
  printf("%g %g\n", squares[0], squares[1]);
  TF_DeleteTensor(result);
  TF_DeleteTensor(feed);
  TF_CloseSession(session, status);
  TF_DeleteSession(session, status);
  TF_DeleteSessionOptions(options);
  TF_DeleteGraph(graph);
  TF_DeleteStatus(status);
  return 0;
}
"""


def pkg_config(pc_dir, package):
    environment = dict(os.environ, PKG_CONFIG_PATH=str(pc_dir))
    flags = subprocess.run(
        ["pkg-config", "--cflags", "--libs", package],
        env=environment,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return flags


def build_and_run(tmp_path, flags, library_dir):
    source = tmp_path / "prog.c"
    source.write_text(PROGRAM)
    binary = tmp_path / "prog"
    subprocess.run(
        ["cc", "-std=c99", "-Wall", "-Werror", str(source), "-o", str(binary), *flags], check=True
    )
    environment = dict(os.environ, LD_LIBRARY_PATH=str(library_dir))
    result = subprocess.run(
        [str(binary)], check=False, env=environment, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    prefix = tmp_path_factory.mktemp("prefix")
    subprocess.run(
        ["make", "-s", "install", f"PREFIX={prefix}"], cwd=REPO, check=True, capture_output=True
    )
    return prefix


def test_install_lays_out_tensorflows_paths(installed):
    for header in HEADERS:
        assert (installed / "include" / "tensorflow" / "c" / header).is_file()
    assert (installed / "lib" / "libtensorweave.so").is_file()
    assert os.readlink(installed / "lib" / "libtensorflow.so") == "libtensorweave.so"
    for package in ("tensorweave", "tensorflow"):
        assert (installed / "lib" / "pkgconfig" / f"{package}.pc").is_file()


@pytest.mark.parametrize("package", ["tensorweave", "tensorflow"])
def test_install_builds_a_tensorflow_program_from_pkg_config(installed, tmp_path, package):
    flags = pkg_config(installed / "lib" / "pkgconfig", package)
    assert build_and_run(tmp_path, flags, installed / "lib") == "9 16\n"


def test_install_is_relocatable(installed, tmp_path):
    # The .pc files find their prefix from where they are, so a moved tree
    # (a package manager's staging directory) still works.
    moved = tmp_path / "moved"
    shutil.copytree(installed, moved, symlinks=True)
    flags = pkg_config(moved / "lib" / "pkgconfig", "tensorweave")
    assert any(str(moved) in flag for flag in flags)
    assert build_and_run(tmp_path, flags, moved / "lib") == "9 16\n"


@pytest.mark.parametrize("header", HEADERS)
def test_install_each_header_compiles_alone(installed, tmp_path, header):
    source = tmp_path / "alone.c"
    source.write_text(f"#include <tensorflow/c/{header}>\nint main(void) {{ return 0; }}\n")
    for compiler, flags in [("cc", ["-std=c99", "-pedantic"]), ("c++", ["-x", "c++"])]:
        subprocess.run(
            [compiler, *flags, "-Wall", "-Wextra", "-Werror", f"-I{installed / 'include'}",
             "-fsyntax-only", str(source)],
            check=True,
        )  # fmt: skip


def test_install_wheel_carries_headers_and_pkg_config(tmp_path):
    spec = importlib.util.spec_from_file_location("tensorweave_setup", REPO / "setup.py")
    setup = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(setup)
    package = tmp_path / "tensorweave"
    package.mkdir()
    shutil.copyfile(REPO / "build" / "lib" / "libtensorweave.so", package / "libtensorweave.so")
    setup.copy_c_api_headers(str(package))
    for header in HEADERS:
        assert (package / "include" / "tensorflow" / "c" / header).is_file()
    flags = pkg_config(package / "lib" / "pkgconfig", "tensorweave")
    assert build_and_run(tmp_path, flags, package) == "9 16\n"
