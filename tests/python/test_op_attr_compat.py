"""Our OpDefs accept every graph TensorFlow 2.21 writes for the ops we
register (issue 10 part 3, the attr compatibility policy).

TensorFlow's op list and the dtypes of its CPU kernels are recorded in
tests/fixtures/tf_op_list by tests/fixtures/record_op_list.py. For every op
the runtime registers (TF_GetAllOpList) that TensorFlow also has:
  - every attr TensorFlow defines exists here with the same type and the
    same default (compared as AttrValue; no default means required), and a
    minimum no stricter than TensorFlow's; an attr only we define has a
    default (TensorFlow's graphs never carry it);
  - a string attr's allowed values include TensorFlow's (an attr value the
    kernels do not implement is refused by the kernel with UNIMPLEMENTED, so
    a graph that does not use it still imports);
  - a type attr admits every dtype TensorFlow has a CPU kernel for, among the
    dtypes our Tensor holds (SUPPORTED_DTYPES: no half, bfloat16, complex or
    quantized types);
  - the input and output args have the same names, types, type_attr,
    number_attr, type_list_attr and is_ref.
Ops only we register start with "_" (the executor's) or are listed in
OURS_ONLY. A rule an op cannot meet yet is listed in EXCEPTIONS with the
reason; an exception that is no longer needed is itself a failure.

A second check imports into our runtime, op by op, a GraphDef whose node
carries every attr TensorFlow 2.21 writes: each defaulted attr at
TensorFlow's default (as TensorFlow's AddDefaultAttrsToGraphDef leaves
them, e.g. BatchMatMulV2's grad_x/grad_y) and each required one at a value
our OpDef admits.
"""

import collections
import gzip
import os

import pytest
import tensorweave as tf
from tensorweave import pywrap_tensorweave
from tensorweave.proto import attr_value_pb2, graph_pb2, op_def_pb2, tensor_shape_pb2, types_pb2

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_op_list")

# The element dtypes our Tensor holds and kernels compute on
# (runtime/framework/types.h TW_FOR_EACH_TYPE). Resource handles and
# variants are only carried, so no element-wise kernel is asked for them.
SUPPORTED_DTYPES = frozenset(
    types_pb2.DataType.Value(name)
    for name in (
        "DT_FLOAT",
        "DT_DOUBLE",
        "DT_INT32",
        "DT_INT64",
        "DT_UINT8",
        "DT_INT8",
        "DT_INT16",
        "DT_UINT16",
        "DT_UINT32",
        "DT_UINT64",
        "DT_BOOL",
        "DT_STRING",
    )
)

# Ops we register that TensorFlow does not, with the reason.
_CONTRIB_MEMORY_STATS = (
    "TensorFlow 1.x's tf.contrib.memory_stats (tensorflow/contrib/memory_stats), whose ops "
    "left with contrib"
)
OURS_ONLY = {
    "BytesInUse": _CONTRIB_MEMORY_STATS,
    "BytesLimit": _CONTRIB_MEMORY_STATS,
    "MaxBytesInUse": _CONTRIB_MEMORY_STATS,
}

_NO_NARROW_INTEGER_KERNELS = (
    "no kernels for the narrow integers yet (int8/int16/uint8 ... that TensorFlow's CPU "
    "kernels run); float, double, int32 and int64 are here"
)
_NO_NARROW_INTEGER_POOLING = (
    "max pooling here runs float and double (and int32/int64 for MaxPool); TensorFlow's "
    "CPU kernels also run the narrow integers"
)
# (op, what) -> reason, where `what` is an attr name, "inputs" or "outputs".
EXCEPTIONS = {
    ("BatchMatMulV2", "T"): "no int16 batched matmul kernel yet",
    ("Conv2D", "T"): "no int32 convolution kernel yet (TensorFlow runs int32 Conv2D on CPU)",
    ("Conv2DBackpropInput", "T"): "no int32 convolution kernel yet",
    (
        "_FusedConv2D",
        "T",
    ): "no int8 fused convolution kernel yet (TensorFlow runs int8 _FusedConv2D on CPU)",
    **{
        (op, "T"): _NO_NARROW_INTEGER_POOLING
        for op in (
            "MaxPool",
            "MaxPoolGrad",
            "MaxPoolV2",
            "MaxPoolGradV2",
            "MaxPoolGradGrad",
            "MaxPoolGradGradV2",
            "MaxPoolWithArgmax",
            "MaxPoolGradWithArgmax",
        )
    },
    **{
        (op, "T"): _NO_NARROW_INTEGER_KERNELS
        for op in (
            "ScatterAdd",
            "ScatterSub",
            "SegmentSum",
            "SparseSegmentSum",
            "SparseSegmentSumWithNumSegments",
        )
    },
    ("Cast", "SrcT"): "TensorFlow's OpDef admits string, but its CastOp refuses every cast "
    "from or to string (Unimplemented at kernel construction); ours refuses it at import",
    ("Cast", "DstT"): "TensorFlow's OpDef admits string, but its CastOp refuses every cast "
    "from or to string (Unimplemented at kernel construction); ours refuses it at import",
}


def _load_tf_op_list():
    with open(os.path.join(FIXTURES, "op_list.pb.gz"), "rb") as f:
        op_list = op_def_pb2.OpList.FromString(gzip.decompress(f.read()))
    return {op.name: op for op in op_list.op}


def _load_tf_cpu_kernels():
    """{op: [{attr: set of dtype enums}]}, one dict per CPU kernel."""
    known = set(types_pb2.DataType.keys())
    kernels = collections.defaultdict(list)
    with open(os.path.join(FIXTURES, "cpu_kernels.txt.gz"), "rb") as f:
        for line in gzip.decompress(f.read()).decode().splitlines():
            op, *constraints = line.split("\t")
            kernel = {}
            for constraint in constraints:
                attr, names = constraint.split("=")
                # Dtypes newer than our types.proto (float8, int4, ...) are
                # ones we do not hold anyway.
                kernel[attr] = {types_pb2.DataType.Value(n) for n in names.split(",") if n in known}
            kernels[op].append(kernel)
    return kernels


TF_OPS = _load_tf_op_list()
TF_CPU_KERNELS = _load_tf_cpu_kernels()


def our_ops():
    op_list = op_def_pb2.OpList.FromString(pywrap_tensorweave.TF_GetAllOpList())
    return {op.name: op for op in op_list.op}


OUR_OPS = our_ops()
SHARED_OPS = sorted(name for name in OUR_OPS if name in TF_OPS)


def _allowed_types(attr):
    """The dtypes an OpDef attr admits; every dtype when it has no list."""
    if attr.HasField("allowed_values"):
        return set(attr.allowed_values.list.type)
    return set(types_pb2.DataType.values())


def tf_cpu_dtypes(op_name, tf_attr):
    """The supported dtypes TensorFlow's CPU kernels of `op_name` run for the
    type attr: the union over its kernels of the attr's constraint (a kernel
    without one takes every dtype the OpDef admits), within the OpDef's list."""
    admitted = _allowed_types(tf_attr) & SUPPORTED_DTYPES
    union = set()
    for kernel in TF_CPU_KERNELS.get(op_name, ()):
        union |= kernel.get(tf_attr.name, admitted)
    return union & admitted


def _type_names(dtypes):
    return sorted(types_pb2.DataType.Name(t)[3:].lower() for t in dtypes)


def _default(attr):
    return attr.default_value.SerializeToString() if attr.HasField("default_value") else None


def attr_mismatches(op_name, ours, theirs):
    """{what: description} of the ways our OpDef `ours` differs from
    TensorFlow's `theirs`."""
    found = {}
    our_attrs = {attr.name: attr for attr in ours.attr}
    tf_attr_names = {attr.name for attr in theirs.attr}
    for tf_attr in theirs.attr:
        attr = our_attrs.get(tf_attr.name)
        if attr is None:
            found[tf_attr.name] = f"missing (TensorFlow: {tf_attr})".replace("\n", " ")
            continue
        problems = []
        if attr.type != tf_attr.type:
            problems.append(f"type {attr.type!r}, TensorFlow's {tf_attr.type!r}")
        if _default(attr) != _default(tf_attr):
            problems.append(
                f"default {attr.default_value if attr.HasField('default_value') else None}, "
                f"TensorFlow's "
                f"{tf_attr.default_value if tf_attr.HasField('default_value') else None}"
            )
        if attr.has_minimum and (not tf_attr.has_minimum or attr.minimum > tf_attr.minimum):
            problems.append(f"minimum {attr.minimum}, TensorFlow's {tf_attr.minimum}")
        if tf_attr.type in ("type", "list(type)"):
            lacking = tf_cpu_dtypes(op_name, tf_attr) - _allowed_types(attr)
            if lacking:
                problems.append(f"lacks dtypes TensorFlow runs on CPU: {_type_names(lacking)}")
        elif tf_attr.HasField("allowed_values") and attr.HasField("allowed_values"):
            lacking = set(tf_attr.allowed_values.list.s) - set(attr.allowed_values.list.s)
            if lacking:
                problems.append(f"lacks allowed values {sorted(lacking)}")
        if problems:
            found[tf_attr.name] = "; ".join(problems).replace("\n", " ")
    for attr in ours.attr:
        if attr.name not in tf_attr_names and not attr.HasField("default_value"):
            found[attr.name] = "required here, unknown to TensorFlow (its graphs never set it)"
    for what in ("input_arg", "output_arg"):
        ours_args = [_arg_signature(arg) for arg in getattr(ours, what)]
        tf_args = [_arg_signature(arg) for arg in getattr(theirs, what)]
        if ours_args != tf_args:
            found[what.replace("_arg", "s")] = f"{ours_args}, TensorFlow's {tf_args}"
    return found


def _arg_signature(arg):
    return (arg.name, arg.type, arg.type_attr, arg.number_attr, arg.type_list_attr, arg.is_ref)


def all_mismatches():
    return {
        (name, what): problem
        for name in SHARED_OPS
        for what, problem in attr_mismatches(name, OUR_OPS[name], TF_OPS[name]).items()
    }


def test_the_recorded_op_list_is_tensorflow_2_21s():
    with open(os.path.join(FIXTURES, "MANIFEST.txt")) as f:
        assert "tensorflow_version: 2.21." in f.read()
    assert len(TF_OPS) > 1500
    batch_matmul = {attr.name: attr for attr in TF_OPS["BatchMatMulV2"].attr}
    assert not batch_matmul["grad_x"].default_value.b
    assert {"DT_INT8", "DT_UINT16"} <= {
        types_pb2.DataType.Name(t) for t in tf_cpu_dtypes("AddV2", TF_OPS["AddV2"].attr[0])
    }


def test_every_shared_op_matches_tensorflows_opdef():
    mismatches = {
        key: problem for key, problem in all_mismatches().items() if key not in EXCEPTIONS
    }
    report = "\n".join(
        f"{op}.{what}: {problem}" for (op, what), problem in sorted(mismatches.items())
    )
    assert not mismatches, f"OpDefs that differ from TensorFlow 2.21's:\n{report}"


def test_every_op_only_we_register_is_internal_or_listed():
    ours_only = sorted(
        name
        for name in OUR_OPS
        if name not in TF_OPS and not name.startswith("_") and name not in OURS_ONLY
    )
    assert not ours_only, f"ops TensorFlow 2.21 does not have: {ours_only}"
    assert set(OURS_ONLY) <= set(OUR_OPS), sorted(set(OURS_ONLY) - set(OUR_OPS))


def test_every_exception_is_still_needed():
    stale = sorted(key for key in EXCEPTIONS if key not in all_mismatches())
    assert not stale, f"exceptions no longer needed (remove them): {stale}"
    stale_only = sorted(name for name in OURS_ONLY if name in TF_OPS)
    assert not stale_only, f"listed as ours only but TensorFlow has them: {stale_only}"


def test_the_comparison_finds_what_it_should():
    # Guards the checker: a missing defaulted attr, a changed default, a
    # narrower dtype list, a stricter minimum and a renamed input are each
    # reported; TensorFlow's own OpDef matches itself.
    tf_add = TF_OPS["AddV2"]
    assert attr_mismatches("AddV2", tf_add, tf_add) == {}
    ours = op_def_pb2.OpDef()
    ours.CopyFrom(TF_OPS["BatchMatMulV2"])
    del ours.attr[[a.name for a in ours.attr].index("grad_x")]
    [adj_x] = [a for a in ours.attr if a.name == "adj_x"]
    adj_x.default_value.b = True
    [t] = [a for a in ours.attr if a.name == "T"]
    t.allowed_values.list.ClearField("type")
    t.allowed_values.list.type.append(types_pb2.DT_FLOAT)
    ours.input_arg[0].name = "a"
    found = attr_mismatches("BatchMatMulV2", ours, TF_OPS["BatchMatMulV2"])
    assert set(found) == {"grad_x", "adj_x", "T", "inputs"}, found
    assert "int32" in found["T"] and "float" not in found["T"].split("[")[1]
    pack = op_def_pb2.OpDef()
    pack.CopyFrom(TF_OPS["Pack"])
    [n] = [a for a in pack.attr if a.name == "N"]
    n.minimum = 2
    assert set(attr_mismatches("Pack", pack, TF_OPS["Pack"])) == {"N"}


# ---------------------------------------------------------------------------
# Importing nodes that carry every attr TensorFlow 2.21 writes.


def _preferred_dtype(attr):
    """A dtype both TensorFlow and our OpDef admit, float first."""
    allowed = _allowed_types(attr)
    for dtype in (types_pb2.DT_FLOAT, types_pb2.DT_INT32, types_pb2.DT_INT64, types_pb2.DT_BOOL):
        if dtype in allowed:
            return dtype
    return min(allowed)


# Required string attrs whose value must parse, per (op, attr): the node's
# inputs are as many as the number attr's minimum (N = 1 for Einsum).
_REQUIRED_STRINGS = {("Einsum", "equation"): b"ij->ji"}


def _required_attr_value(our_attr, tf_attr, op_name=None):
    """A value for an attr TensorFlow has no default for, that our OpDef admits."""
    value = attr_value_pb2.AttrValue()
    if (op_name, tf_attr.name) in _REQUIRED_STRINGS:
        value.s = _REQUIRED_STRINGS[op_name, tf_attr.name]
        return value
    count = max(tf_attr.minimum if tf_attr.has_minimum else 1, 1)
    kind = tf_attr.type
    if kind == "type":
        value.type = _preferred_dtype(our_attr)
    elif kind == "list(type)":
        value.list.type.extend([_preferred_dtype(our_attr)] * count)
    elif kind == "int":
        value.i = count
    elif kind == "float":
        value.f = 0.5
    elif kind == "bool":
        value.b = False
    elif kind == "string":
        allowed = list(our_attr.allowed_values.list.s)
        value.s = allowed[0] if allowed else b"x"
    elif kind == "shape":
        value.shape.unknown_rank = True
    elif kind == "list(int)":
        value.list.i.extend([1] * max(count, 4))
    elif kind == "list(float)":
        value.list.f.extend([0.5] * count)
    elif kind == "list(string)":
        value.list.s.extend([b"x"] * count)
    elif kind == "list(shape)":
        for _ in range(count):
            value.list.shape.add().unknown_rank = True
    elif kind == "tensor":
        value.tensor.dtype = types_pb2.DT_FLOAT
        value.tensor.float_val.append(0.0)
        value.tensor.tensor_shape.CopyFrom(tensor_shape_pb2.TensorShapeProto())
    else:
        return None
    return value


def _arg_dtypes(arg, attrs):
    """The dtypes of an input arg's tensors under the node's attrs."""
    if arg.type_list_attr:
        return list(attrs[arg.type_list_attr].list.type)
    dtype = arg.type or attrs[arg.type_attr].type
    count = attrs[arg.number_attr].i if arg.number_attr else 1
    return [dtype] * count


def node_with_tensorflows_attrs(op_name):
    """A GraphDef with the op's node (every TensorFlow attr set) fed by
    placeholders (variables for ref inputs); None when an attr has no value
    to synthesize (function attrs)."""
    ours, theirs = OUR_OPS[op_name], TF_OPS[op_name]
    our_attrs = {attr.name: attr for attr in ours.attr}
    graph_def = graph_pb2.GraphDef()
    node = graph_def.node.add(name="node", op=op_name)
    for tf_attr in theirs.attr:
        if tf_attr.HasField("default_value"):
            value = tf_attr.default_value
        else:
            value = _required_attr_value(our_attrs.get(tf_attr.name, tf_attr), tf_attr, op_name)
            if value is None:
                return None
        node.attr[tf_attr.name].CopyFrom(value)
    for arg in theirs.input_arg:
        for k, dtype in enumerate(_arg_dtypes(arg, node.attr)):
            source = graph_def.node.add(name=f"{arg.name}_{k}")
            source.op = "VariableV2" if arg.is_ref else "Placeholder"
            source.attr["dtype"].type = dtype
            if arg.is_ref:
                source.attr["shape"].shape.CopyFrom(tensor_shape_pb2.TensorShapeProto())
            node.input.append(source.name)
    return graph_def


# Ops whose node with TensorFlow's attrs does not import yet, with the reason.
# Internal ops ("_Arg", "_Send", ...) are not checked: only the runtime may
# insert them into a graph.
IMPORT_EXCEPTIONS = {
    **dict.fromkeys(
        ("Enter", "RefEnter", "Exit", "RefExit", "NextIteration", "RefNextIteration"),
        "a frame op imports only as part of a whole while loop (Enter ... Exit); "
        "tests/python/test_control_flow_fixtures.py imports TensorFlow 2.21's while loops, "
        "whose nodes carry these ops with all of TensorFlow's attrs",
    ),
}


def import_failures():
    """{op: error} for the shared ops whose synthesized node does not import."""
    failures = {}
    for op_name in (name for name in SHARED_OPS if not name.startswith("_")):
        graph_def = node_with_tensorflows_attrs(op_name)
        if graph_def is None:
            continue
        with tf.Graph().as_default():
            try:
                tf.import_graph_def(graph_def, name="")
            except ValueError as error:  # reported below, all at once
                failures[op_name] = f"{type(error).__name__}: {error}"
    return failures


def test_nodes_with_every_attr_tensorflow_writes_import():
    failures = import_failures()
    unexpected = {name: error for name, error in failures.items() if name not in IMPORT_EXCEPTIONS}
    report = "\n".join(f"{name}: {message}" for name, message in sorted(unexpected.items()))
    assert not unexpected, f"nodes with TensorFlow 2.21's attrs that do not import:\n{report}"
    stale = sorted(name for name in IMPORT_EXCEPTIONS if name not in failures)
    assert not stale, f"import exceptions no longer needed (remove them): {stale}"


def test_a_node_with_an_attr_unknown_to_the_opdef_is_refused():
    # Guards the import check: an attr our OpDef lacks fails the import,
    # so the check above would see a missing attr.
    graph_def = node_with_tensorflows_attrs("AddV2")
    graph_def.node[0].attr["grad_x"].b = False
    with tf.Graph().as_default(), pytest.raises(ValueError, match="grad_x"):
        tf.import_graph_def(graph_def, name="")
