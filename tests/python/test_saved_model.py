"""tf.saved_model: SavedModels tensorweave writes load back in tensorweave
(graph, variables, init op, assets, several meta graphs, import scopes, text
format), with TensorFlow's checks and errors. Loading TensorFlow's own
SavedModels is tests/python/test_saved_model_fixtures.py; both directions
against TensorFlow itself are tests/interop/test_saved_model_interop.py."""

import os

import numpy as np
import pytest
import tensorweave as tf
from tensorweave.proto import meta_graph_pb2, saved_model_pb2, types_pb2

X = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.25]], np.float32)
W = np.arange(6, dtype=np.float32).reshape(3, 2)
B = np.array([0.5, -1.0], np.float32)


def affine_model(use_resource=False):
    """y = x @ w + b with trained-looking values (not the initial ones)."""
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.Variable(np.zeros((3, 2), np.float32), name="w", use_resource=use_resource)
    b = tf.Variable(np.zeros(2, np.float32), name="b", use_resource=use_resource)
    y = tf.add(tf.matmul(x, w), b, name="y")
    return x, y, w, b


def train(sess, w, b):
    sess.run(tf.global_variables_initializer())
    sess.run([w.assign(W), b.assign(B)])


def serve(export_dir, tags=("serve",), key="serving_default", **load_kwargs):
    with tf.Session(graph=tf.Graph()) as sess:
        meta_graph_def = tf.saved_model.loader.load(sess, list(tags), export_dir, **load_kwargs)
        signature = meta_graph_def.signature_def[key]
        scope = load_kwargs.get("import_scope")
        prefix = f"{scope}/" if scope else ""
        return meta_graph_def, sess.run(
            prefix + signature.outputs["y"].name, {prefix + signature.inputs["x"].name: X}
        )


@pytest.mark.parametrize("use_resource", [False, True])
def test_simple_save_then_load_serves_the_trained_values(tmp_path, use_resource):
    export_dir = str(tmp_path / "model")
    x, y, w, b = affine_model(use_resource)
    with tf.Session() as sess:
        train(sess, w, b)
        tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"y": y})
    assert sorted(os.listdir(export_dir)) == ["saved_model.pb", "variables"]
    meta_graph_def, y_value = serve(export_dir)
    np.testing.assert_allclose(y_value, X @ W + B)
    assert list(meta_graph_def.meta_info_def.tags) == ["serve"]
    signature = meta_graph_def.signature_def["serving_default"]
    assert signature.method_name == "tensorflow/serving/predict"
    assert signature.inputs["x"].name == "x:0"
    assert signature.inputs["x"].dtype == types_pb2.DT_FLOAT
    assert [d.size for d in signature.inputs["x"].tensor_shape.dim] == [-1, 3]
    assert signature.outputs["y"].name == "y:0"
    # simple_save clears devices, as TensorFlow's does.
    assert all(node.device == "" for node in meta_graph_def.graph_def.node)


def test_saved_model_pb_is_a_saved_model_with_tensorflows_numbers(tmp_path):
    export_dir = str(tmp_path / "model")
    x, y, w, b = affine_model()
    with tf.Session() as sess:
        train(sess, w, b)
        tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"y": y})
    data = (tmp_path / "model" / "saved_model.pb").read_bytes()
    # saved_model_schema_version (field 1, varint) = 1, then meta_graphs (field 2).
    assert data.startswith(b"\x08\x01\x12")
    saved_model = saved_model_pb2.SavedModel.FromString(data)
    assert saved_model.saved_model_schema_version == 1
    (meta_graph_def,) = saved_model.meta_graphs
    saver_def = meta_graph_def.saver_def
    assert saver_def.restore_op_name and saver_def.filename_tensor_name
    # The variables are TensorFlow's VariableDefs in the variables collection.
    variable_defs = [
        meta_graph_pb2.VariableDef.FromString(value)
        for value in meta_graph_def.collection_def["variables"].bytes_list.value
    ]
    assert [v.variable_name for v in variable_defs] == ["w:0", "b:0"]
    assert [v.snapshot_name for v in variable_defs] == ["w/read:0", "b/read:0"]
    ops = {op.name for op in meta_graph_def.meta_info_def.stripped_op_list.op}
    assert {"MatMul", "Placeholder", "VariableV2", "RestoreV2", "SaveV2"} <= ops


def test_loading_restores_then_runs_the_main_op_with_asset_paths_fed(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("alpha\nbeta\n")
    export_dir = str(tmp_path / "model")
    loads = tf.Variable(np.int64(41), name="loads")
    asset = tf.constant(str(vocab), name="vocab_asset")
    vocab_path = tf.Variable(b"", name="vocab_path")
    # Adds one to the restored value: 42 proves the restore ran first.
    main_op = tf.group(tf.assign(vocab_path, asset), tf.assign_add(loads, 1), name="main_op")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
        builder.add_meta_graph_and_variables(
            sess, ["serve"], assets_collection=[asset], main_op=main_op
        )
        builder.save()
    assert (tmp_path / "model" / "assets" / "vocab.txt").read_text() == "alpha\nbeta\n"
    with tf.Session(graph=tf.Graph()) as sess:
        meta_graph_def = tf.saved_model.loader.load(sess, ["serve"], export_dir)
        assert sess.run("loads:0") == 42
        assert sess.run("vocab_path:0").decode() == os.path.join(export_dir, "assets", "vocab.txt")
        assert list(meta_graph_def.collection_def["saved_model_main_op"].node_list.value) == [
            "main_op"
        ]
        (packed,) = meta_graph_def.collection_def["saved_model_assets"].any_list.value
        # TensorFlow unpacks by its own message name.
        assert packed.type_url == "type.googleapis.com/tensorflow.AssetFileDef"


def test_legacy_init_op_is_the_main_op(tmp_path):
    export_dir = str(tmp_path / "model")
    counter = tf.Variable(7, name="counter")
    bump = tf.assign_add(counter, 10).op
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        builder = tf.saved_model.Builder(export_dir)
        builder.add_meta_graph_and_variables(sess, ["serve"], legacy_init_op=bump)
        builder.save()
    with tf.Session(graph=tf.Graph()) as sess:
        tf.saved_model.load(sess, ["serve"], export_dir)
        assert sess.run("counter:0") == 17


def test_several_meta_graphs_share_the_variables(tmp_path):
    export_dir = str(tmp_path / "model")
    x, y, w, b = affine_model()
    doubled = tf.multiply(y, 2.0, name="doubled")
    serving = tf.saved_model.signature_def_utils.predict_signature_def({"x": x}, {"y": y})
    training = tf.saved_model.signature_def_utils.predict_signature_def({"x": x}, {"y": doubled})
    with tf.Session() as sess:
        train(sess, w, b)
        builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
        builder.add_meta_graph_and_variables(
            sess, [tf.saved_model.tag_constants.SERVING], signature_def_map={"s": serving}
        )
        builder.add_meta_graph(
            [tf.saved_model.tag_constants.TRAINING, "gpu"], signature_def_map={"t": training}
        )
        builder.save()
    _, served = serve(export_dir, key="s")
    np.testing.assert_allclose(served, X @ W + B)
    _, trained = serve(export_dir, tags=["gpu", "train"], key="t")
    np.testing.assert_allclose(trained, 2 * (X @ W + B))


def test_loading_unknown_tags_is_a_runtime_error_listing_the_tag_sets(tmp_path):
    export_dir = str(tmp_path / "model")
    x, y, w, b = affine_model()
    with tf.Session() as sess:
        train(sess, w, b)
        tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"y": y})
    with tf.Session(graph=tf.Graph()) as sess:
        with pytest.raises(RuntimeError) as raised:
            tf.saved_model.loader.load(sess, ["train"], export_dir)
        assert sess.graph.get_operations() == []
    assert str(raised.value) == (
        "MetaGraphDef associated with tags 'train' could not be found in SavedModel, with "
        "available tags '[{'serve'}]'. To inspect available tag-sets in the SavedModel, "
        "please use the SavedModel CLI: `saved_model_cli`."
    )
    # A subset of the tags is not a match either.
    with tf.Session(graph=tf.Graph()) as sess, pytest.raises(RuntimeError):
        tf.saved_model.loader.load(sess, ["serve", "gpu"], export_dir)


def test_import_scope_prefixes_the_loaded_names(tmp_path):
    export_dir = str(tmp_path / "model")
    x, y, w, b = affine_model()
    with tf.Session() as sess:
        train(sess, w, b)
        tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"y": y})
    meta_graph_def, y_value = serve(export_dir, import_scope="served")
    np.testing.assert_allclose(y_value, X @ W + B)
    # The returned MetaGraphDef keeps the saved names.
    assert meta_graph_def.signature_def["serving_default"].inputs["x"].name == "x:0"


def test_as_text_writes_a_pbtxt_that_loads(tmp_path):
    export_dir = str(tmp_path / "model")
    x, y, w, b = affine_model()
    with tf.Session() as sess:
        train(sess, w, b)
        builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
        builder.add_meta_graph_and_variables(
            sess,
            ["serve"],
            signature_def_map={
                "serving_default": tf.saved_model.predict_signature_def({"x": x}, {"y": y})
            },
        )
        path = builder.save(as_text=True)
    assert path == os.path.join(export_dir, "saved_model.pbtxt").encode()
    assert (
        b"saved_model_schema_version: 1" in (tmp_path / "model" / "saved_model.pbtxt").read_bytes()
    )
    assert tf.saved_model.loader.maybe_saved_model_directory(export_dir)
    _, y_value = serve(export_dir)
    np.testing.assert_allclose(y_value, X @ W + B)


def test_strip_default_attrs_leaves_out_defaults_and_still_loads(tmp_path):
    export_dir = str(tmp_path / "model")
    x, y, w, b = affine_model()
    with tf.Session() as sess:
        train(sess, w, b)
        builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
        builder.add_meta_graph_and_variables(
            sess,
            ["serve"],
            signature_def_map={
                "serving_default": tf.saved_model.predict_signature_def({"x": x}, {"y": y})
            },
            strip_default_attrs=True,
        )
        builder.save()
    saved_model = saved_model_pb2.SavedModel.FromString(
        (tmp_path / "model" / "saved_model.pb").read_bytes()
    )
    meta_graph_def = saved_model.meta_graphs[0]
    assert meta_graph_def.meta_info_def.stripped_default_attrs
    matmul = next(node for node in meta_graph_def.graph_def.node if node.op == "MatMul")
    assert "transpose_a" not in matmul.attr and "T" in matmul.attr
    _, y_value = serve(export_dir)
    np.testing.assert_allclose(y_value, X @ W + B)


def test_builder_refuses_a_non_empty_export_dir(tmp_path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "file").write_text("x")
    with pytest.raises(AssertionError, match="already exists, and isn't empty"):
        tf.saved_model.builder.SavedModelBuilder(str(tmp_path / "taken"))
    # An existing empty directory is fine; a missing one is created.
    (tmp_path / "empty").mkdir()
    tf.saved_model.builder.SavedModelBuilder(str(tmp_path / "empty"))
    tf.saved_model.builder.SavedModelBuilder(str(tmp_path / "new" / "nested"))
    assert (tmp_path / "new" / "nested").is_dir()


def test_builder_call_order_and_arguments_are_checked(tmp_path):
    _, y, w, b = affine_model()
    with tf.Session() as sess:
        train(sess, w, b)
        builder = tf.saved_model.builder.SavedModelBuilder(str(tmp_path / "model"))
        with pytest.raises(AssertionError, match="has not been saved yet"):
            builder.add_meta_graph(["train"])
        no_dtype = meta_graph_pb2.SignatureDef()
        no_dtype.inputs["x"].name = "x:0"
        with pytest.raises(AssertionError, match="must have the dtype field set"):
            builder.add_meta_graph_and_variables(sess, ["serve"], {"s": no_dtype})
        no_name = meta_graph_pb2.SignatureDef()
        no_name.inputs["x"].dtype = types_pb2.DT_FLOAT
        with pytest.raises(AssertionError, match="'encoding' fields"):
            builder.add_meta_graph_and_variables(sess, ["serve"], {"s": no_name})
        with pytest.raises(KeyError, match="reserved for initialization"):
            builder.add_meta_graph_and_variables(
                sess, ["serve"], {"__saved_model_init_op": meta_graph_pb2.SignatureDef()}
            )
        with pytest.raises(TypeError, match="to be an Operation"):
            builder.add_meta_graph_and_variables(sess, ["serve"], main_op=y)
        builder.add_meta_graph_and_variables(sess, ["serve"])
        with pytest.raises(AssertionError, match="already been saved"):
            builder.add_meta_graph_and_variables(sess, ["serve"])
        tf.add_to_collection("saved_model_main_op", tf.no_op(name="first"))
        with pytest.raises(ValueError, match="already contains one or more main ops"):
            builder.add_meta_graph(["train"], main_op=tf.no_op(name="second"))


def test_asset_tensors_must_be_string_constants(tmp_path):
    builder = tf.saved_model.builder.SavedModelBuilder(str(tmp_path / "model"))
    x = tf.placeholder(tf.string, [], name="x")
    with tf.Session() as sess:
        with pytest.raises(TypeError, match="must be of type constant"):
            builder.add_meta_graph_and_variables(sess, ["serve"], assets_collection=[x])
        with pytest.raises(TypeError, match="must be of dtype string"):
            builder.add_meta_graph_and_variables(
                sess, ["serve"], assets_collection=[tf.constant(1.0)]
            )


def test_a_graph_without_variables_saves_and_loads(tmp_path):
    export_dir = str(tmp_path / "model")
    x = tf.placeholder(tf.float32, [None], name="x")
    y = tf.multiply(x, 3.0, name="y")
    with tf.Session() as sess:
        tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"y": y})
    with tf.Session(graph=tf.Graph()) as sess:
        meta_graph_def = tf.saved_model.loader.load(sess, ["serve"], export_dir)
        assert not meta_graph_def.HasField("saver_def")
        np.testing.assert_allclose(sess.run("y:0", {"x:0": [1.0, 2.0]}), [3.0, 6.0])


def test_loading_a_missing_or_damaged_saved_model_is_an_os_error(tmp_path):
    with (
        tf.Session(graph=tf.Graph()) as sess,
        pytest.raises(OSError, match="SavedModel file does not exist at"),
    ):
        tf.saved_model.loader.load(sess, ["serve"], str(tmp_path))
    assert not tf.saved_model.loader.maybe_saved_model_directory(str(tmp_path))
    assert not tf.saved_model.contains_saved_model(str(tmp_path))
    (tmp_path / "saved_model.pb").write_bytes(b"\x12\xff\xff\xff")
    assert tf.saved_model.maybe_saved_model_directory(str(tmp_path))
    with (
        tf.Session(graph=tf.Graph()) as sess,
        pytest.raises(OSError, match="Cannot parse file"),
    ):
        tf.saved_model.loader.load(sess, ["serve"], str(tmp_path))


def test_loading_without_the_variables_checkpoint_fails_naming_it(tmp_path):
    export_dir = tmp_path / "model"
    x, y, w, b = affine_model()
    with tf.Session() as sess:
        train(sess, w, b)
        tf.saved_model.simple_save(sess, str(export_dir), {"x": x}, {"y": y})
    for name in os.listdir(export_dir / "variables"):
        os.remove(export_dir / "variables" / name)
    with (
        tf.Session(graph=tf.Graph()) as sess,
        pytest.raises(tf.errors.NotFoundError, match="variables"),
    ):
        tf.saved_model.loader.load(sess, ["serve"], str(export_dir))


def test_tensorflow_v1_spellings():
    compat = tf.compat.v1.saved_model
    assert compat.Builder is compat.builder.SavedModelBuilder
    assert compat.load is compat.loader.load
    assert compat.SERVING == compat.tag_constants.SERVING == "serve"
    assert compat.TRAINING == "train" and compat.GPU == "gpu" and compat.TPU == "tpu"
    assert compat.DEFAULT_SERVING_SIGNATURE_DEF_KEY == "serving_default"
    assert compat.PREDICT_METHOD_NAME == "tensorflow/serving/predict"
    assert compat.CLASSIFY_METHOD_NAME == "tensorflow/serving/classify"
    assert compat.REGRESS_METHOD_NAME == "tensorflow/serving/regress"
    assert compat.signature_constants.CLASSIFY_OUTPUT_SCORES == "scores"
    assert compat.MAIN_OP_KEY == "saved_model_main_op"
    assert compat.LEGACY_INIT_OP_KEY == "legacy_init_op"
    assert compat.ASSETS_KEY == "saved_model_assets"
    assert compat.constants.SAVED_MODEL_FILENAME_PB == "saved_model.pb"
    assert compat.VARIABLES_DIRECTORY == compat.VARIABLES_FILENAME == "variables"
    assert compat.build_tensor_info is compat.utils.build_tensor_info
    assert compat.predict_signature_def is compat.signature_def_utils.predict_signature_def
    assert compat.simple_save is tf.saved_model.simple_save
    assert callable(compat.main_op.main_op)
    with pytest.raises(AttributeError, match="does not provide `tf.saved_model.save`"):
        compat.save  # noqa: B018 (TF2's object-based save is not provided)


def test_main_op_initializes_local_variables(tmp_path):
    local = tf.Variable(5, name="local", collections=[tf.GraphKeys.LOCAL_VARIABLES])
    export_dir = str(tmp_path / "model")
    with tf.Session() as sess:
        sess.run(local.initializer)
        sess.run(local.assign(9))
        builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
        builder.add_meta_graph_and_variables(
            sess, ["serve"], main_op=tf.saved_model.main_op.main_op()
        )
        builder.save()
    with tf.Session(graph=tf.Graph()) as sess:
        tf.saved_model.loader.load(sess, ["serve"], export_dir)
        # Local variables are not saved: the main op initializes them.
        assert sess.run("local:0") == 5
