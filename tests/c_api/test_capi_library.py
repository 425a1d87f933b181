"""Op libraries (TF_LoadLibrary, TF_GetOpList, TF_DeleteLibraryHandle),
kernel listings, log listeners and TF_RegisterFilesystemPlugin."""

import pathlib
import subprocess

import numpy as np
import pytest
from capi_helpers import CODES, TF_FLOAT

REPO = pathlib.Path(__file__).resolve().parents[2]

# A user op library as a TensorFlow user writes one (REGISTER_OP +
# REGISTER_KERNEL_BUILDER), built against this runtime's headers.
LIBRARY_SOURCE = r"""
#include "runtime/framework/op_def.h"
#include "runtime/framework/op_kernel.h"

namespace tensorweave {

REGISTER_OP("TwLoadedTimesThree").Input("x: float").Output("y: float");

class TimesThree : public OpKernel {
 public:
  explicit TimesThree(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& x = c->input(0);
    Tensor* y = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, x.shape(), &y));
    for (int64_t i = 0; i < x.NumElements(); ++i) y->data<float>()[i] = 3 * x.data<float>()[i];
  }
};
REGISTER_KERNEL_BUILDER(Name("TwLoadedTimesThree").Device("CPU"), TimesThree);

}  // namespace tensorweave
"""


@pytest.fixture(scope="module")
def op_library(tmp_path_factory):
    directory = tmp_path_factory.mktemp("oplib")
    source = directory / "times_three.cc"
    source.write_text(LIBRARY_SOURCE)
    library = directory / "libtimes_three.so"
    subprocess.run(
        ["g++", "-std=c++17", "-O0", "-fPIC", "-shared", f"-I{REPO}", f"-I{REPO / 'build' / 'gen'}",
         "-I/usr/include/eigen3", "-DEIGEN_USE_THREADS", str(source), "-o", str(library),
         f"-L{REPO / 'build' / 'lib'}", "-ltensorweave"],
        check=True,
    )  # fmt: skip
    return library


# Loads the library (twice), prints its op list's bytes in hex, and runs the
# op. A process of its own: the ops a library registers stay registered, and
# the op coverage tests of the pytest process must not see this one.
LOADER_PROGRAM = r"""
#include <stdio.h>
#include <string.h>
#include <tensorflow/c/c_api.h>

int main(int argc, char** argv) {
  TF_Status* status = TF_NewStatus();
  TF_Library* handle = TF_LoadLibrary(argv[1], status);
  if (TF_GetCode(status) != TF_OK) { printf("load: %s\n", TF_Message(status)); return 1; }
  TF_Buffer ops = TF_GetOpList(handle);
  TF_Library* again = TF_LoadLibrary(argv[1], status);
  TF_Buffer ops_again = TF_GetOpList(again);
  if (ops.length != ops_again.length || memcmp(ops.data, ops_again.data, ops.length) != 0) {
    printf("a second load gave another op list\n");
    return 1;
  }
  for (size_t i = 0; i < ops.length; ++i) printf("%02x", ((const unsigned char*)ops.data)[i]);
  printf("\n");
  TF_DeleteLibraryHandle(again);
  TF_DeleteLibraryHandle(handle);

  TF_Graph* graph = TF_NewGraph();
  TF_OperationDescription* d = TF_NewOperation(graph, "Placeholder", "x");
  TF_SetAttrType(d, "dtype", TF_FLOAT);
  TF_Operation* x = TF_FinishOperation(d, status);
  /* The library's op has no shape function: refused, as in TensorFlow, until
     the graph stops requiring one. */
  TF_Output in = {x, 0};
  d = TF_NewOperation(graph, "TwLoadedTimesThree", "y");
  TF_AddInput(d, in);
  TF_FinishOperation(d, status);
  if (TF_GetCode(status) != TF_INVALID_ARGUMENT) { printf("accepted without a shape fn\n"); return 1; }
  TF_SetRequireShapeInferenceFns(graph, false);
  d = TF_NewOperation(graph, "TwLoadedTimesThree", "y");
  TF_AddInput(d, in);
  TF_Operation* y = TF_FinishOperation(d, status);
  if (TF_GetCode(status) != TF_OK) { printf("op: %s\n", TF_Message(status)); return 1; }
  TF_SessionOptions* options = TF_NewSessionOptions();
  TF_Session* session = TF_NewSession(graph, options, status);
  int64_t dims[1] = {2};
  TF_Tensor* feed = TF_AllocateTensor(TF_FLOAT, dims, 1, 2 * sizeof(float));
  float values[2] = {1.0f, -2.0f};
  memcpy(TF_TensorData(feed), values, sizeof values);
  TF_Output out = {y, 0};
  TF_Tensor* result = NULL;
  TF_SessionRun(session, NULL, &in, &feed, 1, &out, &result, 1, NULL, 0, NULL, status);
  if (TF_GetCode(status) != TF_OK) { printf("run: %s\n", TF_Message(status)); return 1; }
  const float* tripled = (const float*)TF_TensorData(result);
  printf("%g %g\n", tripled[0], tripled[1]);
  TF_DeleteTensor(result);
  TF_DeleteTensor(feed);
  TF_DeleteSession(session, status);
  TF_DeleteSessionOptions(options);
  TF_DeleteGraph(graph);
  TF_DeleteStatus(status);
  return 0;
}
"""


@pytest.mark.covers("TF_GetOpList", "TF_DeleteLibraryHandle", "TF_SetRequireShapeInferenceFns")
def test_TF_LoadLibrary_registers_the_librarys_ops(pb, tmp_path, op_library):
    source = tmp_path / "loader.c"
    source.write_text(LOADER_PROGRAM)
    loader = tmp_path / "loader"
    build = REPO / "build"
    subprocess.run(
        ["cc", "-std=c99", "-Wall", "-Werror", f"-I{build / 'include'}", str(source), "-o",
         str(loader), f"-L{build / 'lib'}", "-ltensorweave", f"-Wl,-rpath,{build / 'lib'}"],
        check=True,
    )  # fmt: skip
    done = subprocess.run(
        [str(loader), str(op_library)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    op_list_hex, result = done.stdout.splitlines()
    op_list = pb.OpList.FromString(bytes.fromhex(op_list_hex))
    assert [op.name for op in op_list.op] == ["TwLoadedTimesThree"]
    assert [a.name for a in op_list.op[0].input_arg] == ["x"]
    assert result == "3 -6"


def test_TF_LoadLibrary_missing_file(api, lib, status):
    assert lib.TF_LoadLibrary(b"/nonexistent/libnothing.so", status) == api.ffi.NULL
    assert api.code(status) == CODES["NOT_FOUND"]
    assert "libnothing.so" in api.message(status)


def kernel_list(api, pb, buffer):
    kernels = pb.KernelList.FromString(api.ffi.buffer(buffer.data, buffer.length)[:])
    api.lib.TF_DeleteBuffer(buffer)
    return kernels


def test_TF_GetRegisteredKernelsForOp(api, lib, pb, status):
    kernels = kernel_list(api, pb, lib.TF_GetRegisteredKernelsForOp(b"MatMul", status)).kernel
    api.check(status)
    assert kernels and {k.op for k in kernels} == {"MatMul"}
    assert {k.device_type for k in kernels} == {"CPU"}
    float_kernels = [
        k for k in kernels
        if any(c.name == "T" and list(c.allowed_values.list.type) == [TF_FLOAT] for c in k.constraint)
    ]  # fmt: skip
    assert len(float_kernels) == 1
    empty = kernel_list(api, pb, lib.TF_GetRegisteredKernelsForOp(b"NoSuchOp", status))
    api.check(status)
    assert len(empty.kernel) == 0


def test_TF_GetAllRegisteredKernels(api, lib, pb, status):
    kernels = kernel_list(api, pb, lib.TF_GetAllRegisteredKernels(status)).kernel
    api.check(status)
    ops = {k.op for k in kernels}
    assert {"MatMul", "Const", "Placeholder"} <= ops and len(kernels) > 500


def test_TF_RegisterLogListener_receives_print_output(api, lib, graph, session):
    heard = []

    @api.ffi.callback("void(const char*)")
    def listener(message):
        heard.append(api.ffi.string(message).decode())

    # Listeners cannot be removed: keep this one alive for the process.
    test_TF_RegisterLogListener_receives_print_output.listener = listener
    lib.TF_RegisterLogListener(listener)
    x = api.const(graph, "x", np.array([1, 2], np.int32))
    printed = api.op(
        graph, "Print", "p", inputs=[(x, 0), [(x, 0)]], attrs={"message": ("string", b"x=")}
    )
    api.run(session, [], [(printed, 0)])
    assert "x=[1 2]" in heard


def test_TF_RegisterFilesystemPlugin_is_unimplemented(api, lib, status):
    lib.TF_RegisterFilesystemPlugin(b"libs3_filesystem.so", status)
    assert api.code(status) == CODES["UNIMPLEMENTED"]
