"""C API functions and while loops against real TensorFlow (run in the
interop Python as a subprocess with a timeout): a graph built with
TF_GraphToFunction, TF_GraphCopyFunction and TF_NewWhile imports and runs in
TensorFlow with the same result as in tensorweave, and a FunctionDef
TensorFlow writes imports with TF_FunctionImportFunctionDef and runs here."""

import pathlib
import subprocess

import cffi
import numpy as np
import pytest
from capi_helpers import Api, header_declarations, proto_classes

REPO = pathlib.Path(__file__).resolve().parents[2]
TIMEOUT_SECONDS = 300


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    ffi = cffi.FFI()
    ffi.cdef(header_declarations(REPO / "c_api" / "c_api.h"))
    library = ffi.dlopen(str(REPO / "build" / "lib" / "libtensorweave.so"))
    return Api(ffi, library, proto_classes(REPO, tmp_path_factory.mktemp("protos")))


def run_in_tensorflow(tf_python, script, *args):
    done = subprocess.run(
        [tf_python, "-c", script, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]


def run_here(api, graph, fetch):
    session = api.new_session(graph)
    try:
        return api.run(session, fetches=[fetch])[0]
    finally:
        status = api.lib.TF_NewStatus()
        api.lib.TF_DeleteSession(session, status)
        api.lib.TF_DeleteStatus(status)


RUN_GRAPH_DEF = """
import sys
import tensorflow as tf
graph_def = tf.compat.v1.GraphDef.FromString(open(sys.argv[1], "rb").read())
graph = tf.Graph()
with graph.as_default():
    tf.import_graph_def(graph_def, name="")
with tf.compat.v1.Session(graph=graph) as session:
    print(float(session.run(sys.argv[2])))
"""


def test_loop_calling_a_function_runs_in_tensorflow(api, tf_python, tmp_path):
    """x = 1; while x < 100: x = f(x) with f(x) = 3x + 3 (a hashed name)."""
    ffi, lib = api.ffi, api.lib
    body = lib.TF_NewGraph()
    graph = lib.TF_NewGraph()
    try:
        x = api.placeholder(body, "X")
        three = api.const(body, "three", np.float32(3))
        mul = api.op(body, "Mul", "mul", [(x, 0), (three, 0)])
        y = api.op(body, "AddV2", "y", [(mul, 0), (three, 0)])
        func = api.call(
            lib.TF_GraphToFunction, body, b"f", 1, -1, ffi.NULL, 1, api.outputs([(x, 0)]),
            1, api.outputs([(y, 0)]), ffi.NULL, ffi.NULL, ffi.NULL,
        )  # fmt: skip
        name = ffi.string(lib.TF_FunctionName(func)).decode()
        start = api.const(graph, "start", np.float32(1))
        params = api.call(lib.TF_NewWhile, graph, api.outputs([(start, 0)]), 1)
        limit = api.const(params.cond_graph, "limit", np.float32(100))
        less = api.op(
            params.cond_graph, "Less", "less", [(params.cond_inputs[0].oper, 0), (limit, 0)]
        )
        params.cond_output = api.output(less, 0)
        api.call(lib.TF_GraphCopyFunction, params.body_graph, func, ffi.NULL)
        lib.TF_DeleteFunction(func)
        call = api.op(params.body_graph, name, "call", [(params.body_inputs[0].oper, 0)])
        params.body_outputs[0] = api.output(call, 0)
        outputs = ffi.new("TF_Output[]", 1)
        api.call(lambda status: lib.TF_FinishWhile(ffi.addressof(params), status, outputs))
        assert run_here(api, graph, (outputs[0].oper, 0)) == 201
        path = tmp_path / "loop.pb"
        path.write_bytes(api.graph_def(graph).SerializeToString())
    finally:
        lib.TF_DeleteGraph(body)
        lib.TF_DeleteGraph(graph)
    assert float(run_in_tensorflow(tf_python, RUN_GRAPH_DEF, path, "while/Exit:0")) == 201


WRITE_FUNCTION_DEF = """
import sys
import tensorflow as tf
@tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
def cube_minus_one(v):
    return v * v * v - 1.0
definition = cube_minus_one.get_concrete_function().function_def
open(sys.argv[1], "wb").write(definition.SerializeToString())
print(definition.signature.name)
"""


def test_a_tensorflow_function_def_runs_here(api, tf_python, tmp_path):
    ffi, lib = api.ffi, api.lib
    path = tmp_path / "function.pb"
    name = run_in_tensorflow(tf_python, WRITE_FUNCTION_DEF, path)
    data = path.read_bytes()
    func = api.call(lib.TF_FunctionImportFunctionDef, data, len(data))
    graph = lib.TF_NewGraph()
    try:
        assert ffi.string(lib.TF_FunctionName(func)).decode() == name
        api.call(lib.TF_GraphCopyFunction, graph, func, ffi.NULL)
        value = api.const(graph, "value", np.float32(3))
        call = api.op(graph, name, "call", [(value, 0)])
        assert run_here(api, graph, (call, 0)) == 26
    finally:
        lib.TF_DeleteFunction(func)
        lib.TF_DeleteGraph(graph)
