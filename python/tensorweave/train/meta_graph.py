"""`<prefix>.meta` files: tf.train.export_meta_graph and tf.train.import_meta_graph.

A meta file is a serialized MetaGraphDef (runtime/proto/meta_graph.proto,
TensorFlow's message and field numbers). We write its graph_def, its
saver_def (the Saver's filename tensor, save tensor and restore op) and the
graph's collections; importing adds the graph and restores the collections
TensorFlow restores (operations and tensors by name, strings, numbers,
Any protos). Variable collections are TensorFlow's VariableDefs both ways:
importing turns each back into a Variable (a ResourceVariable when it is
one) over the imported ops, so tf.global_variables(), tf.trainable_variables()
and optimizers work on a graph TensorFlow or tensorweave wrote.

    saver = tf.train.import_meta_graph("ckpt/model-100.meta")
    with tf.Session() as sess:
        saver.restore(sess, "ckpt/model-100")
        sess.run("accuracy:0", {"x:0": images})
"""

import numbers
import os

from google.protobuf import any_pb2
from google.protobuf.message import DecodeError

from tensorweave import pywrap_tensorweave
from tensorweave.framework import importer, ops
from tensorweave.ops import variables
from tensorweave.proto import graph_pb2, meta_graph_pb2, op_def_pb2
from tensorweave.train import checkpoint_management

__all__ = [
    "export_meta_graph",
    "import_meta_graph",
]

# Collections whose values TensorFlow writes as serialized protos (VariableDef,
# SaverDef, QueueRunnerDef, control-flow contexts) and turns back into Python
# objects on import. We write and read back the variable ones; the others are
# skipped on import (their bytes in a collection would break every caller).
_VARIABLE_COLLECTIONS = (
    ops.GraphKeys.GLOBAL_VARIABLES,
    ops.GraphKeys.TRAINABLE_VARIABLES,
    ops.GraphKeys.LOCAL_VARIABLES,
    ops.GraphKeys.MODEL_VARIABLES,
    "metric_variables",
)
_PROTO_COLLECTIONS = frozenset(
    _VARIABLE_COLLECTIONS + ("savers", "queue_runners", "cond_context", "while_context")
)


def _variable_def(variable):
    """TensorFlow's VariableDef of a tf.Variable (ref or resource)."""
    initial_value = getattr(variable, "initial_value", None)
    # A resource variable's value() adds a new read op; its first read
    # (the graph element) is already in the exported graph.
    snapshot = getattr(variable, "_graph_element", None)
    if snapshot is None:
        snapshot = variable.value()
    return meta_graph_pb2.VariableDef(
        variable_name=variable.name,
        initializer_name=variable.initializer.name,
        snapshot_name=snapshot.name,
        is_resource=hasattr(variable, "handle"),
        initial_value_name=initial_value.name if initial_value is not None else "",
        trainable=bool(getattr(variable, "trainable", True)),
    )


def _fill_collection(collection_def, key, items):
    """Writes `items` into `collection_def` as TensorFlow would; False when
    they are of a kind a CollectionDef cannot hold (the collection is then
    left out, as TensorFlow leaves it out with a warning)."""
    if key in _VARIABLE_COLLECTIONS:
        if not all(hasattr(item, "initializer") and hasattr(item, "value") for item in items):
            return False
        collection_def.bytes_list.value.extend(
            _variable_def(item).SerializeToString() for item in items
        )
        return True
    if key in _PROTO_COLLECTIONS:
        return False
    if all(isinstance(item, (ops.Operation, ops.Tensor)) for item in items):
        collection_def.node_list.value.extend(item.name for item in items)
    elif all(isinstance(item, (str, bytes)) for item in items):
        collection_def.bytes_list.value.extend(
            item.encode() if isinstance(item, str) else item for item in items
        )
    elif all(isinstance(item, any_pb2.Any) for item in items):
        collection_def.any_list.value.extend(items)
    elif all(isinstance(item, numbers.Integral) and not isinstance(item, bool) for item in items):
        collection_def.int64_list.value.extend(int(item) for item in items)
    elif all(isinstance(item, numbers.Real) for item in items):
        collection_def.float_list.value.extend(float(item) for item in items)
    else:
        return False
    return True


def _add_collections(meta_graph_def, graph, collection_list):
    keys = graph.get_all_collection_keys() if collection_list is None else collection_list
    for key in keys:
        items = graph.get_collection(key)
        if not isinstance(key, str) or not items:
            continue
        if not _fill_collection(meta_graph_def.collection_def[key], key, items):
            del meta_graph_def.collection_def[key]


def _registered_op_defs():
    op_list = op_def_pb2.OpList.FromString(pywrap_tensorweave.TF_GetAllOpList())
    return {op_def.name: op_def for op_def in op_list.op}


def _strip_default_attrs(graph_def, op_defs):
    """Drops the attrs whose value is their OpDef's default, as TensorFlow's
    strip_default_attrs does (a reader fills them in from its own OpDefs)."""
    for node in graph_def.node:
        op_def = op_defs.get(node.op)
        if op_def is None:
            continue
        for attr_def in op_def.attr:
            if (
                attr_def.HasField("default_value")
                and attr_def.name in node.attr
                and node.attr[attr_def.name] == attr_def.default_value
            ):
                del node.attr[attr_def.name]


def create_meta_graph_def(graph, saver=None, clear_devices=False, saver_def=None):
    """A MetaGraphDef holding `graph`'s GraphDef and the SaverDef of `saver`
    (or `saver_def`): what a Saver's `.meta` file holds."""
    meta_graph_def = meta_graph_pb2.MetaGraphDef()
    meta_graph_def.graph_def.CopyFrom(graph.as_graph_def())
    if clear_devices:
        for node in meta_graph_def.graph_def.node:
            node.device = ""
    if saver_def is None and saver is not None:
        saver_def = saver.as_saver_def()
    if saver_def is not None:
        meta_graph_def.saver_def.CopyFrom(saver_def)
    return meta_graph_def


def export_meta_graph(
    filename=None,
    graph=None,
    saver=None,
    clear_devices=False,
    collection_list=None,
    strip_default_attrs=False,
    saver_def=None,
    **unused,
):
    """Returns the MetaGraphDef of `graph` (default: the default graph) and
    `saver` as TensorFlow's export_meta_graph makes it (with the OpDefs of
    the ops it uses and the collections, those in `collection_list` when
    given), and writes it to `filename` when one is given."""
    from tensorweave import __version__

    graph = graph or ops.get_default_graph()
    meta_graph_def = create_meta_graph_def(graph, saver, clear_devices, saver_def)
    op_defs = _registered_op_defs()
    used = sorted({node.op for node in meta_graph_def.graph_def.node})
    meta_info = meta_graph_def.meta_info_def
    meta_info.stripped_op_list.op.extend(op_defs[name] for name in used if name in op_defs)
    # TensorFlow parses tensorflow_version as a version number when it
    # imports (to tell pre-1.9 files); ours would not parse, so it stays
    # empty and the writer is named in the git version field instead.
    meta_info.tensorflow_git_version = f"tensorweave {__version__}"
    if strip_default_attrs:
        _strip_default_attrs(meta_graph_def.graph_def, op_defs)
        meta_info.stripped_default_attrs = True
    _add_collections(meta_graph_def, graph, collection_list)
    if filename:
        checkpoint_management.atomic_write(os.fspath(filename), meta_graph_def.SerializeToString())
    return meta_graph_def


def read_meta_graph(meta_graph_or_file):
    """A MetaGraphDef from itself, its serialized bytes or a file holding them."""
    if isinstance(meta_graph_or_file, meta_graph_pb2.MetaGraphDef):
        return meta_graph_or_file
    if isinstance(meta_graph_or_file, (bytes, bytearray)):
        data = bytes(meta_graph_or_file)
    else:
        with open(os.fspath(meta_graph_or_file), "rb") as f:
            data = f.read()
    try:
        return meta_graph_pb2.MetaGraphDef.FromString(data)
    except DecodeError as error:
        raise ValueError(f"Not a MetaGraphDef: {error}") from None


def _scoped(name, import_scope):
    return f"{import_scope}/{name}" if import_scope else name


def _imported_variable(serialized, import_scope, variables_by_def):
    """The Variable a serialized VariableDef names; one object per VariableDef,
    as TensorFlow makes it, so a variable in both the global and the trainable
    collection is the same object in both."""
    variable = variables_by_def.get(serialized)
    if variable is None:
        try:
            variable_def = meta_graph_pb2.VariableDef.FromString(serialized)
        except DecodeError as error:
            raise ValueError(f"A variable collection holds no VariableDef: {error}") from None
        variable = variables.Variable.from_proto(variable_def, import_scope=import_scope)
        variables_by_def[serialized] = variable
    return variable


def _restore_collections(graph, meta_graph_def, import_scope):
    variables_by_def = {}
    for key in sorted(meta_graph_def.collection_def):
        collection_def = meta_graph_def.collection_def[key]
        kind = collection_def.WhichOneof("kind")
        if key in _VARIABLE_COLLECTIONS and kind == "bytes_list":
            for value in collection_def.bytes_list.value:
                variable = _imported_variable(value, import_scope, variables_by_def)
                graph.add_to_collection(key, variable)
            continue
        if key in _PROTO_COLLECTIONS or kind is None:
            continue
        values = getattr(collection_def, kind).value
        for value in values:
            if kind == "node_list":
                value = graph.as_graph_element(_scoped(value, import_scope))
            elif kind == "int64_list":
                value = int(value)
            graph.add_to_collection(key, value)


def import_graph_and_collections(meta_graph_def, clear_devices=False, import_scope=None):
    """Adds the graph of `meta_graph_def` to the default graph under
    `import_scope` and restores its collections; the graph is unchanged if
    the GraphDef does not import."""
    graph_def = meta_graph_def.graph_def
    if clear_devices:  # on a copy: the caller's MetaGraphDef stays as it was
        graph_def = graph_pb2.GraphDef()
        graph_def.CopyFrom(meta_graph_def.graph_def)
        for node in graph_def.node:
            node.device = ""
    importer.import_graph_def(graph_def, name=import_scope or "")
    _restore_collections(ops.get_default_graph(), meta_graph_def, import_scope)


def import_meta_graph(meta_graph_or_file, clear_devices=False, import_scope=None, **unused):
    """Adds the graph of a meta graph (a MetaGraphDef, its bytes or a file
    holding them) to the default graph, restores its collections and returns
    a Saver over its save and restore ops, or None if it has none."""
    meta_graph_def = read_meta_graph(meta_graph_or_file)
    import_graph_and_collections(meta_graph_def, clear_devices, import_scope)
    if not meta_graph_def.HasField("saver_def"):
        return None
    from tensorweave.train.saver import Saver

    saver_def = meta_graph_def.saver_def
    graph = ops.get_default_graph()
    return Saver._from_graph(
        graph,
        graph.get_tensor_by_name(_scoped(saver_def.filename_tensor_name, import_scope)),
        graph.get_tensor_by_name(_scoped(saver_def.save_tensor_name, import_scope)),
        graph.get_operation_by_name(_scoped(saver_def.restore_op_name, import_scope)),
        saver_def.max_to_keep,
        saver_def.keep_checkpoint_every_n_hours or 10000.0,
    )
