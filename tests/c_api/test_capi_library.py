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


@pytest.mark.covers("TF_GetOpList", "TF_DeleteLibraryHandle")
def test_TF_LoadLibrary_registers_the_librarys_ops(api, lib, pb, graph, session, op_library):
    handle = api.call(lib.TF_LoadLibrary, str(op_library).encode())
    buffer = lib.TF_GetOpList(handle)
    op_list = pb.OpList.FromString(api.ffi.buffer(buffer.data, buffer.length)[:])
    assert [op.name for op in op_list.op] == ["TwLoadedTimesThree"]
    lib.TF_DeleteLibraryHandle(handle)
    # Loaded again: the same list (the ops are registered once).
    again = api.call(lib.TF_LoadLibrary, str(op_library).encode())
    buffer = lib.TF_GetOpList(again)
    assert pb.OpList.FromString(api.ffi.buffer(buffer.data, buffer.length)[:]) == op_list
    lib.TF_DeleteLibraryHandle(again)
    # The op builds and runs through its kernel.
    x = api.placeholder(graph, "x")
    y = api.op(graph, "TwLoadedTimesThree", "y", inputs=[(x, 0)])
    (result,) = api.run(session, [((x, 0), np.array([1.0, -2.0], np.float32))], [(y, 0)])
    assert result.tolist() == [3.0, -6.0]


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
