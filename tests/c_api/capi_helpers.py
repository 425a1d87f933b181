"""Helpers shared by the C API tests: declarations from the header, protobuf
classes compiled from runtime/proto at test time, and a thin wrapper that
turns numpy arrays into TF_Tensors and back and builds operations."""

import subprocess
import types

import numpy as np
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

TF_OK = 0
CODES = {
    "OK": 0,
    "CANCELLED": 1,
    "UNKNOWN": 2,
    "INVALID_ARGUMENT": 3,
    "DEADLINE_EXCEEDED": 4,
    "NOT_FOUND": 5,
    "ALREADY_EXISTS": 6,
    "PERMISSION_DENIED": 7,
    "RESOURCE_EXHAUSTED": 8,
    "FAILED_PRECONDITION": 9,
    "ABORTED": 10,
    "OUT_OF_RANGE": 11,
    "UNIMPLEMENTED": 12,
    "INTERNAL": 13,
    "UNAVAILABLE": 14,
    "DATA_LOSS": 15,
    "UNAUTHENTICATED": 16,
}

# numpy dtype -> TF_DataType number (TF_STRING, 7, is handled separately).
TF_TYPES = {
    np.dtype(np.float32): 1,
    np.dtype(np.float64): 2,
    np.dtype(np.int32): 3,
    np.dtype(np.uint8): 4,
    np.dtype(np.int16): 5,
    np.dtype(np.int8): 6,
    np.dtype(np.int64): 9,
    np.dtype(np.bool_): 10,
    np.dtype(np.uint16): 17,
    np.dtype(np.uint32): 22,
    np.dtype(np.uint64): 23,
}
NP_TYPES = {number: dtype for dtype, number in TF_TYPES.items()}
TF_FLOAT, TF_DOUBLE, TF_INT32, TF_STRING, TF_INT64, TF_BOOL = 1, 2, 3, 7, 9, 10


def header_declarations(path):
    """c_api.h without preprocessor lines, the C++ guard or inline function
    bodies, ready for cdef; the headers it includes with #include "x.h"
    (tf_tstring.h) are read in their place."""
    kept, in_cplusplus, inline_depth = [], False, None
    for line in path.read_text().splitlines():
        stripped = line.strip()
        if inline_depth is not None:  # inside a static inline function
            inline_depth += line.count("{") - line.count("}")
            if inline_depth <= 0 and "}" in line:
                inline_depth = None
        elif stripped.startswith("static inline"):
            inline_depth = line.count("{") - line.count("}")
            if inline_depth <= 0 and "}" in line:
                inline_depth = None
        elif stripped == "#ifdef __cplusplus":
            in_cplusplus = True
        elif in_cplusplus:
            in_cplusplus = not stripped.startswith("#endif")
        elif stripped.startswith('#include "'):
            included = path.parent / stripped.split('"')[1]
            kept.append(header_declarations(included))
        elif not stripped.startswith("#"):
            kept.append(line)
    return "\n".join(kept).replace("TF_CAPI_EXPORT", "")


def proto_classes(repo, workdir):
    """Message classes for runtime/proto, in a private descriptor pool so they
    never clash with the tensorweave package's own generated modules."""
    descriptor_set = workdir / "protos.desc"
    protos = sorted(str(p.relative_to(repo)) for p in (repo / "runtime" / "proto").glob("*.proto"))
    subprocess.run(
        [
            "protoc",
            "-Itensorweave/proto=runtime/proto",
            "--include_imports",
            f"--descriptor_set_out={descriptor_set}",
            *protos,
        ],
        cwd=repo,
        check=True,
    )
    files = descriptor_pb2.FileDescriptorSet.FromString(descriptor_set.read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for file_proto in files.file:
        pool.Add(file_proto)
    classes = message_factory.GetMessageClassesForFiles([f.name for f in files.file], pool)
    names = [
        "GraphDef",
        "NodeDef",
        "AttrValue",
        "TensorProto",
        "TensorShapeProto",
        "ConfigProto",
        "RunOptions",
        "CallableOptions",
        "ResourceHandleProto",
        "SavedModel",
        "MetaGraphDef",
        "AssetFileDef",
        "VersionDef",
        "KernelList",
        "ApiDef",
        "FullTypeDef",
        "CppShapeInferenceResult",
        "ServerDef",
    ]
    found = {n: classes[f"tensorweave.{n}"] for n in names}
    # The OpDef messages live in package tensorweave.proto.
    found.update({n: classes[f"tensorweave.proto.{n}"] for n in ("OpDef", "OpList")})
    return types.SimpleNamespace(**found)


class CApiError(Exception):
    def __init__(self, code, message):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class Api:
    """Convenience calls over the raw library. Every helper raises CApiError
    when the C call reports an error, so tests read as the happy path unless
    they check a failure on purpose."""

    def __init__(self, ffi, lib, pb):
        self.ffi, self.lib, self.pb = ffi, lib, pb

    # ---- status ----
    def code(self, status):
        return self.lib.TF_GetCode(status)

    def message(self, status):
        return self.ffi.string(self.lib.TF_Message(status)).decode()

    def check(self, status):
        if self.code(status) != TF_OK:
            raise CApiError(self.code(status), self.message(status))

    def call(self, function, *args):
        """Calls `function(*args, status)` and raises on error."""
        status = self.lib.TF_NewStatus()
        try:
            result = function(*args, status)
            self.check(status)
            return result
        finally:
            self.lib.TF_DeleteStatus(status)

    # ---- tensors ----
    def tensor(self, value, dtype=None):
        """A new TF_Tensor (owned by the caller) holding a copy of `value`."""
        array = np.array(value, dtype=dtype, order="C")
        dims = self.ffi.new("int64_t[]", list(array.shape) or [0])
        t = self.lib.TF_AllocateTensor(TF_TYPES[array.dtype], dims, array.ndim, array.nbytes)
        assert t != self.ffi.NULL
        if array.nbytes:
            self.ffi.memmove(self.lib.TF_TensorData(t), array.tobytes(), array.nbytes)
        return t

    def string_tensor(self, strings, shape=None):
        """A new TF_STRING tensor: one TF_TString per element, set with
        TF_StringCopy, as a TensorFlow 2.x program builds it."""
        strings = list(strings)
        shape = [len(strings)] if shape is None else list(shape)
        dims = self.ffi.new("int64_t[]", shape or [0])
        size = len(strings) * self.ffi.sizeof("TF_TString")
        t = self.lib.TF_AllocateTensor(TF_STRING, dims, len(shape), size)
        assert t != self.ffi.NULL
        elements = self.ffi.cast("TF_TString*", self.lib.TF_TensorData(t))
        for i, value in enumerate(strings):
            self.lib.TF_StringInit(elements + i)
            self.lib.TF_StringCopy(elements + i, value, len(value))
        return t

    def shape(self, t):
        return tuple(self.lib.TF_Dim(t, i) for i in range(self.lib.TF_NumDims(t)))

    def to_numpy(self, t):
        """A copy of a numeric TF_Tensor's elements."""
        dtype = NP_TYPES[self.lib.TF_TensorType(t)]
        size = self.lib.TF_TensorByteSize(t)
        raw = self.ffi.buffer(self.lib.TF_TensorData(t), size)[:] if size else b""
        return np.frombuffer(raw, dtype=dtype).reshape(self.shape(t)).copy()

    def strings(self, t):
        """The elements of a TF_STRING tensor, read from its TF_TStrings."""
        count = self.lib.TF_TensorElementCount(t)
        elements = self.ffi.cast("TF_TString*", self.lib.TF_TensorData(t))
        return [
            self.ffi.buffer(
                self.lib.TF_StringGetDataPointer(elements + i),
                self.lib.TF_StringGetSize(elements + i),
            )[:]
            for i in range(count)
        ]

    def take(self, t):
        """Converts a TF_Tensor to numpy and deletes it."""
        try:
            if self.lib.TF_TensorType(t) == TF_STRING:
                return self.strings(t)
            return self.to_numpy(t)
        finally:
            self.lib.TF_DeleteTensor(t)

    # ---- graphs ----
    def output(self, oper, index=0):
        return self.ffi.new("TF_Output*", {"oper": oper, "index": index})[0]

    def outputs(self, pairs):
        return self.ffi.new("TF_Output[]", [{"oper": o, "index": i} for o, i in pairs])

    def op(self, graph, op_type, name, inputs=(), attrs=None, device=None, control=()):
        """Adds an operation. `inputs` holds (oper, index) pairs, or lists of
        them for list inputs; `attrs` maps names to (kind, value) pairs."""
        desc = self.lib.TF_NewOperation(graph, op_type.encode(), name.encode())
        if device is not None:
            self.lib.TF_SetDevice(desc, device.encode())
        for item in inputs:
            if isinstance(item, list):
                self.lib.TF_AddInputList(desc, self.outputs(item), len(item))
            else:
                self.lib.TF_AddInput(desc, self.output(*item))
        for oper in control:
            self.lib.TF_AddControlInput(desc, oper)
        for attr_name, (kind, value) in (attrs or {}).items():
            self.set_attr(desc, attr_name, kind, value)
        return self.call(self.lib.TF_FinishOperation, desc)

    def set_attr(self, desc, name, kind, value):
        ffi, lib, key = self.ffi, self.lib, name.encode()
        if kind == "type":
            lib.TF_SetAttrType(desc, key, value)
        elif kind == "int":
            lib.TF_SetAttrInt(desc, key, value)
        elif kind == "float":
            lib.TF_SetAttrFloat(desc, key, value)
        elif kind == "bool":
            lib.TF_SetAttrBool(desc, key, value)
        elif kind == "string":
            lib.TF_SetAttrString(desc, key, value, len(value))
        elif kind == "shape":
            if value is None:
                lib.TF_SetAttrShape(desc, key, ffi.NULL, -1)
            else:
                lib.TF_SetAttrShape(desc, key, ffi.new("int64_t[]", list(value) or [0]), len(value))
        elif kind == "tensor":
            t = self.tensor(value) if not isinstance(value, ffi.CData) else value
            try:
                self.call(lib.TF_SetAttrTensor, desc, key, t)
            finally:
                if t is not value:
                    lib.TF_DeleteTensor(t)
        else:
            raise ValueError(kind)

    def placeholder(self, graph, name, dtype=TF_FLOAT, shape=None):
        attrs = {"dtype": ("type", dtype)}
        if shape is not None:
            attrs["shape"] = ("shape", shape)
        return self.op(graph, "Placeholder", name, attrs=attrs)

    def const(self, graph, name, value, dtype=None):
        array = np.asarray(value, dtype=dtype)
        return self.op(
            graph,
            "Const",
            name,
            attrs={"value": ("tensor", array), "dtype": ("type", TF_TYPES[array.dtype])},
        )

    def binary(self, graph, op_type, name, a, b):
        return self.op(graph, op_type, name, inputs=[(a, 0), (b, 0)])

    def graph_def(self, graph):
        buffer = self.lib.TF_NewBuffer()
        try:
            self.call(self.lib.TF_GraphToGraphDef, graph, buffer)
            message = self.pb.GraphDef()
            message.ParseFromString(self.ffi.buffer(buffer.data, buffer.length)[:])
            return message
        finally:
            self.lib.TF_DeleteBuffer(buffer)

    def import_graph_def(self, graph, graph_def, options=None):
        """TF_GraphImportGraphDef of a GraphDef message (or its bytes);
        returns (code, message) instead of raising."""
        data = graph_def if isinstance(graph_def, bytes) else graph_def.SerializeToString()
        buffer = self.lib.TF_NewBufferFromString(data, len(data))
        status = self.lib.TF_NewStatus()
        self.lib.TF_GraphImportGraphDef(
            graph, buffer, options if options is not None else self.ffi.NULL, status
        )
        result = self.code(status), self.message(status)
        self.lib.TF_DeleteStatus(status)
        self.lib.TF_DeleteBuffer(buffer)
        return result

    def operation_names(self, graph):
        """Names of the graph's operations, in TF_GraphNextOperation order."""
        pos, found = self.ffi.new("size_t*", 0), []
        while (oper := self.lib.TF_GraphNextOperation(graph, pos)) != self.ffi.NULL:
            found.append(self.ffi.string(self.lib.TF_OperationName(oper)).decode())
        return found

    # ---- sessions ----
    def options(self, config=None, target=None):
        """New TF_SessionOptions (caller deletes)."""
        opts = self.lib.TF_NewSessionOptions()
        if target is not None:
            self.lib.TF_SetTarget(opts, target.encode())
        if config is not None:
            data = config.SerializeToString()
            self.call(self.lib.TF_SetConfig, opts, data, len(data))
        return opts

    def new_session(self, graph, config=None):
        opts = self.options(config)
        try:
            return self.call(self.lib.TF_NewSession, graph, opts)
        finally:
            self.lib.TF_DeleteSessionOptions(opts)

    def run(self, session, feeds=(), fetches=(), targets=(), run_options=None):
        """TF_SessionRun with numpy feeds [((oper, index), array)] and fetches
        [(oper, index)]; returns the fetched values as numpy arrays."""
        ffi, lib = self.ffi, self.lib
        feed_tensors = [self.tensor(value) for _, value in feeds]
        inputs = self.outputs([key for key, _ in feeds]) if feeds else ffi.NULL
        values = ffi.new("TF_Tensor*[]", feed_tensors) if feeds else ffi.NULL
        outputs = self.outputs(fetches) if fetches else ffi.NULL
        results = ffi.new("TF_Tensor*[]", max(len(fetches), 1))
        target_array = ffi.new("TF_Operation*[]", list(targets)) if targets else ffi.NULL
        options = ffi.NULL
        if run_options is not None:
            data = run_options.SerializeToString()
            options = lib.TF_NewBufferFromString(data, len(data))
        status = lib.TF_NewStatus()
        try:
            lib.TF_SessionRun(
                session,
                options,
                inputs,
                values,
                len(feed_tensors),
                outputs,
                results,
                len(fetches),
                target_array,
                len(targets),
                ffi.NULL,
                status,
            )
            if self.code(status) != TF_OK:
                assert all(results[i] == ffi.NULL for i in range(len(fetches)))
            self.check(status)
            return [self.take(results[i]) for i in range(len(fetches))]
        finally:
            lib.TF_DeleteStatus(status)
            lib.TF_DeleteBuffer(options)
            for t in feed_tensors:
                lib.TF_DeleteTensor(t)

    def make_callable(
        self, session, feeds=(), fetches=(), targets=(), timeout_in_ms=0, options=None
    ):
        """TW_SessionMakeCallable from tensor and operation names (or a
        CallableOptions message); returns the handle."""
        if options is None:
            options = self.pb.CallableOptions(feed=feeds, fetch=fetches, target=targets)
            options.run_options.timeout_in_ms = timeout_in_ms
        data = options.SerializeToString()
        buffer = self.lib.TF_NewBufferFromString(data, len(data))
        handle = self.ffi.new("int64_t*", -1)
        try:
            self.call(self.lib.TW_SessionMakeCallable, session, buffer, handle)
            return handle[0]
        finally:
            self.lib.TF_DeleteBuffer(buffer)

    def run_callable(self, session, handle, feeds=(), noutputs=1):
        """TW_SessionRunCallable with numpy feeds; returns the fetched values.
        On failure checks that every output slot was left NULL."""
        ffi, lib = self.ffi, self.lib
        feed_tensors = [self.tensor(value) for value in feeds]
        values = ffi.new("TF_Tensor*[]", feed_tensors) if feed_tensors else ffi.NULL
        results = ffi.new("TF_Tensor*[]", [ffi.cast("TF_Tensor*", 1)] * max(noutputs, 1))
        status = lib.TF_NewStatus()
        try:
            lib.TW_SessionRunCallable(
                session, handle, values, len(feed_tensors), results, noutputs, status
            )
            if self.code(status) != TF_OK:
                assert all(results[i] == ffi.NULL for i in range(noutputs))
            self.check(status)
            return [self.take(results[i]) for i in range(noutputs)]
        finally:
            lib.TF_DeleteStatus(status)
            for t in feed_tensors:
                lib.TF_DeleteTensor(t)

    def stats(self, session):
        out = self.ffi.new("TW_SessionStats*")
        self.lib.TW_SessionGetStats(session, out)
        return out.runs, out.executors_built, out.cache_hits
