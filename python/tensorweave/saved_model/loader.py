"""tf.saved_model.loader: loads a SavedModel's meta graph into a session.

    with tf.Session(graph=tf.Graph()) as sess:
        meta_graph_def = tf.saved_model.loader.load(
            sess, [tf.saved_model.tag_constants.SERVING], "export/1")
        signature = meta_graph_def.signature_def["serving_default"]
        y = sess.run(signature.outputs["y"].name, {signature.inputs["x"].name: batch})

Loading picks the meta graph whose tags equal `tags`, imports its graph
(and collections) into the session's graph, restores the variables by
running the saver's restore op with the variables' checkpoint prefix fed,
then runs the init op (the main op or legacy init op) with each asset
tensor fed the path of its file under assets/. The steps and errors are
TensorFlow's; runtime/common_runtime/saved_model_loader.cc does the same for
the C API's TF_LoadSessionFromSavedModel.
"""

import os

from google.protobuf import text_format
from google.protobuf.message import DecodeError

from tensorweave.framework.api_export import tf_export
from tensorweave.proto import saved_model_pb2
from tensorweave.saved_model import assets, constants, utils
from tensorweave.train import meta_graph

__all__ = ["load", "maybe_saved_model_directory"]


def parse_saved_model(export_dir):
    """The SavedModel proto of `export_dir` (saved_model.pb, else
    saved_model.pbtxt); OSError if neither exists or parses."""
    export_dir = os.fspath(export_dir)
    path_to_pb = os.path.join(export_dir, constants.SAVED_MODEL_FILENAME_PB)
    path_to_pbtxt = os.path.join(export_dir, constants.SAVED_MODEL_FILENAME_PBTXT)
    saved_model = saved_model_pb2.SavedModel()
    if os.path.exists(path_to_pb):
        with open(path_to_pb, "rb") as f:
            data = f.read()
        try:
            saved_model.ParseFromString(data)
        except DecodeError as error:
            raise OSError(f"Cannot parse file {path_to_pb}: {error}.") from error
    elif os.path.exists(path_to_pbtxt):
        with open(path_to_pbtxt, "rb") as f:
            data = f.read()
        try:
            text_format.Parse(data.decode("utf-8"), saved_model)
        except (text_format.ParseError, UnicodeDecodeError) as error:
            raise OSError(f"Cannot parse file {path_to_pbtxt}: {error}.") from error
    else:
        raise OSError(
            f"SavedModel file does not exist at: {export_dir}{os.path.sep}"
            f"{{{constants.SAVED_MODEL_FILENAME_PBTXT}|{constants.SAVED_MODEL_FILENAME_PB}}}"
        )
    return saved_model


@tf_export("saved_model.maybe_saved_model_directory", "saved_model.contains_saved_model")
def maybe_saved_model_directory(export_dir):
    """Whether `export_dir` holds a SavedModel file (it may still fail to load)."""
    export_dir = os.fspath(export_dir)
    return any(
        os.path.exists(os.path.join(export_dir, name))
        for name in (constants.SAVED_MODEL_FILENAME_PB, constants.SAVED_MODEL_FILENAME_PBTXT)
    )


def meta_graph_def_from_tags(saved_model, tags):
    """The meta graph whose tag set equals `tags`; RuntimeError naming the
    tag sets there are otherwise."""
    available_tags = []
    for meta_graph_def in saved_model.meta_graphs:
        available_tags.append(set(meta_graph_def.meta_info_def.tags))
        if set(meta_graph_def.meta_info_def.tags) == set(tags):
            return meta_graph_def
    raise RuntimeError(
        f"MetaGraphDef associated with tags {str(tags).strip('[]')} "
        "could not be found in SavedModel, with available tags "
        f"'{available_tags}'. To inspect available tag-sets in"
        " the SavedModel, please use the SavedModel CLI: `saved_model_cli`."
    )


def _scoped(name, import_scope):
    return f"{import_scope}/{name}" if import_scope else name


def _restore_variables(sess, meta_graph_def, variables_path, import_scope):
    """Runs the saver's restore op with the variables' prefix fed. A meta
    graph without a saver has no variables to restore."""
    saver_def = meta_graph_def.saver_def
    if not saver_def.restore_op_name:
        return
    graph = sess.graph
    restore_op = graph.get_operation_by_name(_scoped(saver_def.restore_op_name, import_scope))
    filename = graph.get_tensor_by_name(_scoped(saver_def.filename_tensor_name, import_scope))
    sess.run(restore_op, {filename: variables_path})


def _asset_feeds(export_dir, meta_graph_def, import_scope):
    """{asset path tensor name: path of its file under assets/}."""
    assets_dir = constants.assets_directory(export_dir)
    return {
        _scoped(asset.tensor_info.name, import_scope): os.path.join(assets_dir, asset.filename)
        for asset in assets.asset_file_defs(meta_graph_def)
    }


def _init_op(graph, meta_graph_def, import_scope):
    """The op to run after the restore: the init-op signature (TensorFlow 2
    builders), else the main op, else the legacy init op collection."""
    signature = meta_graph_def.signature_def.get(constants.INIT_OP_SIGNATURE_KEY)
    if signature is not None:
        info = signature.outputs.get(constants.INIT_OP_SIGNATURE_KEY)
        if info is not None:
            return utils.get_element_from_tensor_info(info, graph, import_scope)
    for key in (constants.MAIN_OP_KEY, constants.LEGACY_INIT_OP_KEY):
        collection = meta_graph_def.collection_def.get(key)
        if collection is None:
            continue
        names = list(collection.node_list.value)
        if len(names) != 1:
            raise RuntimeError(
                f"Expected exactly one SavedModel init op. Found {len(names)}: {names}."
            )
        return graph.as_graph_element(_scoped(names[0], import_scope))
    return None


@tf_export("saved_model.load")
def load(sess, tags, export_dir, import_scope=None, **saver_kwargs):
    """Loads the meta graph of `export_dir` tagged `tags` into `sess`
    (graph, variables, init op) and returns its MetaGraphDef. With
    `import_scope`, the graph's names are prefixed "<import_scope>/" in the
    session (the returned MetaGraphDef keeps the saved names). RuntimeError
    when no meta graph has exactly these tags."""
    export_dir = os.fspath(export_dir)
    saved_model = parse_saved_model(export_dir)
    meta_graph_def = meta_graph_def_from_tags(saved_model, tags)
    with sess.graph.as_default():
        meta_graph.import_graph_and_collections(
            meta_graph_def,
            clear_devices=saver_kwargs.get("clear_devices", False),
            import_scope=import_scope,
        )
        _restore_variables(sess, meta_graph_def, constants.variables_path(export_dir), import_scope)
        init_op = _init_op(sess.graph, meta_graph_def, import_scope)
        if init_op is not None:
            sess.run([init_op], _asset_feeds(export_dir, meta_graph_def, import_scope))
    return meta_graph_def
