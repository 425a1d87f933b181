"""TF_CheckpointReader: listing and reading a checkpoint the SaveV2 op wrote
(TensorFlow's V2 format: `<prefix>.index` and `<prefix>.data-00000-of-00001`),
and the errors for missing, truncated, damaged and foreign files (never a
crash). Reading tensorweave's older `.twckpt` files through the C API is
tested in test_capi_checkpoint_legacy.py."""

import os
import pathlib

import numpy as np
import pytest
from capi_helpers import CODES, TF_BOOL, TF_DOUBLE, TF_FLOAT, TF_INT32, TF_INT64, TF_STRING

# What the checkpoint holds: {name: (TF_DataType, value)}.
VALUES = {
    "mlp/kernel": (TF_FLOAT, np.arange(6, dtype=np.float32).reshape(2, 3)),
    "mlp/bias": (TF_DOUBLE, np.array([0.5, -1.5])),
    "global_step": (TF_INT64, np.int64(42)),
    "counts": (TF_INT32, np.zeros((2, 0, 3), np.int32)),
    "flags": (TF_BOOL, np.array([True, False, True])),
    "vocab": (TF_STRING, [b"a", b"", b"\x00\xff" * 100]),
}
SORTED_NAMES = sorted(VALUES)


def save(api, graph, prefix, values=VALUES):
    """Writes `values` to the checkpoint `prefix` with a SaveV2 op."""
    lib, ffi = api.lib, api.ffi

    def string_const(name, strings, shape=None):
        tensor = api.string_tensor(strings, shape)
        try:
            return api.op(
                graph,
                "Const",
                name,
                attrs={"value": ("tensor", tensor), "dtype": ("type", TF_STRING)},
            )
        finally:
            lib.TF_DeleteTensor(tensor)

    names = list(values)
    tensors = []
    for i, name in enumerate(names):
        dtype, value = values[name]
        if dtype == TF_STRING:
            tensors.append(string_const(f"value{i}", value))
        else:
            tensors.append(api.const(graph, f"value{i}", value))
    desc = lib.TF_NewOperation(graph, b"SaveV2", b"save")
    lib.TF_AddInput(desc, api.output(string_const("prefix", [prefix.encode()], [])))
    lib.TF_AddInput(desc, api.output(string_const("names", [n.encode() for n in names])))
    lib.TF_AddInput(desc, api.output(string_const("slices", [b""] * len(names))))
    lib.TF_AddInputList(desc, api.outputs([(t, 0) for t in tensors]), len(tensors))
    dtypes = ffi.new("TF_DataType[]", [values[n][0] for n in names])
    lib.TF_SetAttrTypeList(desc, b"dtypes", dtypes, len(names))
    save_op = api.call(lib.TF_FinishOperation, desc)
    session = api.new_session(graph)
    try:
        api.run(session, targets=[save_op])
    finally:
        status = lib.TF_NewStatus()
        lib.TF_DeleteSession(session, status)
        lib.TF_DeleteStatus(status)


@pytest.fixture
def prefix(api, graph, tmp_path):
    path = str(tmp_path / "model-7")
    save(api, graph, path)
    return path


@pytest.fixture
def reader(api, lib, prefix):
    opened = api.call(lib.TF_NewCheckpointReader, prefix.encode())
    yield opened
    lib.TF_DeleteCheckpointReader(opened)


def open_error(api, lib, filename):
    """(code, message) of a TF_NewCheckpointReader that must fail, returning NULL."""
    status = lib.TF_NewStatus()
    try:
        result = lib.TF_NewCheckpointReader(filename, status)
        assert result == api.ffi.NULL
        return api.code(status), api.message(status)
    finally:
        lib.TF_DeleteStatus(status)


def read_tensor(api, lib, reader, name):
    """(code, message, value or None) of TF_CheckpointReaderGetTensor."""
    status = lib.TF_NewStatus()
    try:
        tensor = lib.TF_CheckpointReaderGetTensor(reader, name, status)
        if api.code(status) != 0:
            assert tensor == api.ffi.NULL
            return api.code(status), api.message(status), None
        return 0, "", api.take(tensor)
    finally:
        lib.TF_DeleteStatus(status)


def test_TF_NewCheckpointReader_opens_a_prefix(api, lib, prefix, status):
    assert os.path.isfile(prefix + ".index")
    assert os.path.isfile(prefix + ".data-00000-of-00001")
    opened = lib.TF_NewCheckpointReader(prefix.encode(), status)
    api.check(status)
    assert lib.TF_CheckpointReaderSize(opened) == len(VALUES)
    lib.TF_DeleteCheckpointReader(opened)


def test_TF_NewCheckpointReader_reports_missing_and_unusable_paths(api, lib, tmp_path):
    missing = str(tmp_path / "other")
    code, message = open_error(api, lib, missing.encode())
    assert code == CODES["NOT_FOUND"], message
    assert f"neither {missing}.index nor {missing}.twckpt exists" in message
    (tmp_path / "dir.index").mkdir()
    code, message = open_error(api, lib, str(tmp_path / "dir").encode())
    assert code == CODES["INVALID_ARGUMENT"] and "not a regular file" in message
    code, _ = open_error(api, lib, api.ffi.NULL)
    assert code == CODES["INVALID_ARGUMENT"]


def test_TF_NewCheckpointReader_refuses_truncated_damaged_and_foreign_indexes(
    api, lib, prefix, tmp_path
):
    good = pathlib.Path(prefix + ".index").read_bytes()
    data = pathlib.Path(prefix + ".data-00000-of-00001").read_bytes()
    bad = str(tmp_path / "bad")
    pathlib.Path(bad + ".data-00000-of-00001").write_bytes(data)
    index = pathlib.Path(bad + ".index")
    for length in range(len(good)):
        index.write_bytes(good[:length])
        code, message = open_error(api, lib, bad.encode())
        assert code == CODES["DATA_LOSS"], (length, message)
        assert str(index) in message
    footer = len(good) - 48
    for at in range(len(good)):
        index.write_bytes(good[:at] + bytes([good[at] ^ 0x01]) + good[at + 1 :])
        status = lib.TF_NewStatus()
        opened = lib.TF_NewCheckpointReader(bad.encode(), status)
        code, message = api.code(status), api.message(status)
        lib.TF_DeleteStatus(status)
        if opened != api.ffi.NULL:
            # Only the footer's zero padding after the block handles is
            # covered by no checksum (as in LevelDB and TensorFlow).
            lib.TF_DeleteCheckpointReader(opened)
            assert footer <= at < len(good) - 8 and good[at] == 0, at
            continue
        assert code == CODES["DATA_LOSS"], (at, message)
    index.write_bytes(b"not a checkpoint at all")
    code, message = open_error(api, lib, bad.encode())
    assert code == CODES["DATA_LOSS"] and "less than a table footer" in message


def test_TF_DeleteCheckpointReader_accepts_null_and_leaves_tensors_valid(api, lib, prefix):
    lib.TF_DeleteCheckpointReader(api.ffi.NULL)
    opened = api.call(lib.TF_NewCheckpointReader, prefix.encode())
    tensor = api.call(lib.TF_CheckpointReaderGetTensor, opened, b"mlp/kernel")
    lib.TF_DeleteCheckpointReader(opened)
    np.testing.assert_array_equal(api.take(tensor), VALUES["mlp/kernel"][1])


def test_TF_CheckpointReaderSize_counts_every_tensor(api, lib, tmp_path, reader):
    assert lib.TF_CheckpointReaderSize(reader) == len(VALUES)
    single = str(tmp_path / "single")
    graph = lib.TF_NewGraph()
    save(api, graph, single, values={"only": (TF_FLOAT, np.float32(1))})
    lib.TF_DeleteGraph(graph)
    opened = api.call(lib.TF_NewCheckpointReader, single.encode())
    assert lib.TF_CheckpointReaderSize(opened) == 1
    lib.TF_DeleteCheckpointReader(opened)


def test_TF_CheckpointReaderGetVariable_lists_names_sorted(api, lib, reader):
    names = [
        api.ffi.string(lib.TF_CheckpointReaderGetVariable(reader, i)).decode()
        for i in range(lib.TF_CheckpointReaderSize(reader))
    ]
    assert names == SORTED_NAMES
    for index in (-1, len(VALUES), 1 << 30):
        assert lib.TF_CheckpointReaderGetVariable(reader, index) == api.ffi.NULL


def test_TF_CheckpointReaderHasTensor(api, lib, reader):
    for name in VALUES:
        assert lib.TF_CheckpointReaderHasTensor(reader, name.encode()) == 1
    for name in (b"nope", b"mlp", b"mlp/kernel:0", b""):
        assert lib.TF_CheckpointReaderHasTensor(reader, name) == 0
    assert lib.TF_CheckpointReaderHasTensor(reader, api.ffi.NULL) == 0


def test_TF_CheckpointReaderGetVariableDataType(api, lib, reader):
    for name, (dtype, _) in VALUES.items():
        assert lib.TF_CheckpointReaderGetVariableDataType(reader, name.encode()) == dtype
    assert lib.TF_CheckpointReaderGetVariableDataType(reader, b"nope") == 0
    assert lib.TF_CheckpointReaderGetVariableDataType(reader, api.ffi.NULL) == 0


def test_TF_CheckpointReaderGetVariableNumDims(api, lib, reader):
    for name, (_, value) in VALUES.items():
        assert lib.TF_CheckpointReaderGetVariableNumDims(reader, name.encode()) == np.ndim(value)
    assert lib.TF_CheckpointReaderGetVariableNumDims(reader, b"nope") == -1


def test_TF_CheckpointReaderGetVariableShape(api, lib, reader, status):
    ffi = api.ffi
    for name, (_, value) in VALUES.items():
        rank = np.ndim(value)
        dims = ffi.new("int64_t[]", max(rank, 1))
        lib.TF_CheckpointReaderGetVariableShape(reader, name.encode(), dims, rank, status)
        api.check(status)
        assert list(dims)[:rank] == list(np.shape(value))
    # A scalar needs no array.
    lib.TF_CheckpointReaderGetVariableShape(reader, b"global_step", ffi.NULL, 0, status)
    api.check(status)
    # Room for the wrong number of dims, or a name that is not there: nothing written.
    dims = ffi.new("int64_t[]", [-7, -7, -7])
    lib.TF_CheckpointReaderGetVariableShape(reader, b"mlp/kernel", dims, 3, status)
    assert api.code(status) == CODES["INVALID_ARGUMENT"] and "rank 2" in api.message(status)
    lib.TF_CheckpointReaderGetVariableShape(reader, b"mlp/kernel", ffi.NULL, 2, status)
    assert api.code(status) == CODES["INVALID_ARGUMENT"]
    lib.TF_CheckpointReaderGetVariableShape(reader, b"nope", dims, 3, status)
    assert api.code(status) == CODES["NOT_FOUND"] and "Key nope not found" in api.message(status)
    assert list(dims) == [-7, -7, -7]


def test_TF_CheckpointReaderGetTensor_returns_every_dtype(api, lib, reader):
    for name, (dtype, value) in VALUES.items():
        code, message, loaded = read_tensor(api, lib, reader, name.encode())
        assert code == 0, message
        if dtype == TF_STRING:
            assert loaded == value
        else:
            assert loaded.dtype == np.asarray(value).dtype
            np.testing.assert_array_equal(loaded, value)
    code, message, _ = read_tensor(api, lib, reader, b"nope")
    assert code == CODES["NOT_FOUND"] and "Key nope not found in checkpoint" in message
    code, _, _ = read_tensor(api, lib, reader, api.ffi.NULL)
    assert code == CODES["NOT_FOUND"]


def test_TF_CheckpointReaderGetTensor_finds_damaged_and_vanished_bytes(api, lib, prefix):
    path = prefix + ".data-00000-of-00001"
    good = pathlib.Path(path).read_bytes()
    # Where three tensors' bytes are: values too distinctive to occur elsewhere.
    offsets = {
        name: good.index(needle)
        for name, needle in (
            ("mlp/kernel", VALUES["mlp/kernel"][1].tobytes()),
            ("mlp/bias", VALUES["mlp/bias"][1].tobytes()),
            ("vocab", VALUES["vocab"][1][-1]),
        )
    }
    # Damage in one tensor's bytes: opening works, reading that tensor (only)
    # is DATA_LOSS naming the file and the tensor.
    for name, at in offsets.items():
        with open(path, "wb") as f:
            f.write(good[:at] + bytes([good[at] ^ 0x01]) + good[at + 1 :])
        opened = api.call(lib.TF_NewCheckpointReader, prefix.encode())
        code, message, _ = read_tensor(api, lib, opened, name.encode())
        assert code == CODES["DATA_LOSS"], (name, message)
        assert name in message and path in message, message
        for other in offsets.keys() - {name}:
            assert read_tensor(api, lib, opened, other.encode())[0] == 0
        lib.TF_DeleteCheckpointReader(opened)
    # The file cut short: refused at open; cut under an open reader:
    # DATA_LOSS on read, never a crash.
    with open(path, "wb") as f:
        f.write(good)
    opened = api.call(lib.TF_NewCheckpointReader, prefix.encode())
    os.truncate(path, 0)
    for name in offsets:
        code, message, _ = read_tensor(api, lib, opened, name.encode())
        assert code == CODES["DATA_LOSS"] and "truncated" in message, message
    lib.TF_DeleteCheckpointReader(opened)
    code, message = open_error(api, lib, prefix.encode())
    assert code == CODES["DATA_LOSS"] and "truncated" in message, message
