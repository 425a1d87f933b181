"""TF_RESOURCE tensors through the C API, as in TensorFlow: a fetched handle
is a scalar whose bytes are a serialized ResourceHandleProto (never the
runtime's own handle objects), and a fed one is parsed from such bytes."""

import pytest
from capi_helpers import CODES, TF_FLOAT

TF_RESOURCE = 20


@pytest.fixture
def tensor_array(api, graph):
    """A TensorArray of 3 floats and its size: (array op, size op)."""
    size = api.const(graph, "size", 3, dtype="int32")
    ta = api.op(
        graph, "TensorArrayV3", "ta", inputs=[(size, 0)], attrs={"dtype": ("type", TF_FLOAT)}
    )
    sz = api.op(graph, "TensorArraySizeV3", "sz", inputs=[(ta, 0), (ta, 1)])
    return ta, sz


def session_run(api, session, feeds, fetches):
    """TF_SessionRun with raw TF_Tensor feeds; returns (code, message, outputs)."""
    ffi, lib = api.ffi, api.lib
    inputs = api.outputs([key for key, _ in feeds]) if feeds else ffi.NULL
    values = ffi.new("TF_Tensor*[]", [t for _, t in feeds]) if feeds else ffi.NULL
    outputs = api.outputs(fetches)
    results = ffi.new("TF_Tensor*[]", len(fetches))
    status = lib.TF_NewStatus()
    lib.TF_SessionRun(
        session,
        ffi.NULL,
        inputs,
        values,
        len(feeds),
        outputs,
        results,
        len(fetches),
        ffi.NULL,
        0,
        ffi.NULL,
        status,
    )
    code, message = api.code(status), api.message(status)
    lib.TF_DeleteStatus(status)
    return code, message, [results[i] for i in range(len(fetches))]


def resource_tensor(api, data):
    t = api.lib.TF_AllocateTensor(TF_RESOURCE, api.ffi.NULL, 0, len(data))
    assert t != api.ffi.NULL
    if data:
        api.ffi.memmove(api.lib.TF_TensorData(t), data, len(data))
    return t


def test_a_fetched_handle_is_its_serialized_proto(api, pb, session, tensor_array):
    ta, _ = tensor_array
    code, message, (first, second) = session_run(api, session, [], [(ta, 0), (ta, 0)])
    assert code == CODES["OK"], message
    for t in (first, second):
        assert api.lib.TF_TensorType(t) == TF_RESOURCE
        assert api.lib.TF_NumDims(t) == 0
    size = api.lib.TF_TensorByteSize(first)
    handle = pb.ResourceHandleProto.FromString(
        api.ffi.buffer(api.lib.TF_TensorData(first), size)[:]
    )
    assert handle.name and handle.device.endswith("CPU:0")
    for t in (first, second):
        api.lib.TF_DeleteTensor(t)


def test_a_handle_fed_back_after_its_step_is_refused_cleanly(api, session, tensor_array):
    # Both fetches of one handle, one deleted, the other fed to a later run:
    # its array lived in that step's container, which is gone.
    ta, sz = tensor_array
    _, _, (first, second) = session_run(api, session, [], [(ta, 0), (ta, 0)])
    api.lib.TF_DeleteTensor(second)
    code, message, _ = session_run(api, session, [((ta, 0), first)], [(sz, 0)])
    api.lib.TF_DeleteTensor(first)
    assert code == CODES["INVALID_ARGUMENT"], message


def test_malformed_resource_bytes_are_invalid_argument(api, session, tensor_array):
    ta, sz = tensor_array
    garbage = resource_tensor(api, b"\xff\xff\xff\xff")
    code, message, _ = session_run(api, session, [((ta, 0), garbage)], [(sz, 0)])
    api.lib.TF_DeleteTensor(garbage)
    assert code == CODES["INVALID_ARGUMENT"]
    assert "Malformed TF_RESOURCE tensor" in message


def test_a_resource_tensor_is_a_scalar(api):
    dims = api.ffi.new("int64_t[]", [2])
    assert api.lib.TF_AllocateTensor(TF_RESOURCE, dims, 1, 8) == api.ffi.NULL
    empty = resource_tensor(api, b"")
    assert api.lib.TF_TensorByteSize(empty) == 0
    api.lib.TF_DeleteTensor(empty)
