"""`.meta` files TensorFlow 2.21's tf.compat.v1 Saver wrote
(tests/fixtures/tf_meta_graphs, made by tests/fixtures/record_meta_graphs.py)
import in tensorweave: the Saver import_meta_graph returns restores their
checkpoints (reference and resource variables, a partitioned variable, a
sharded saver with one RestoreV2 per device), tf.global_variables() and
tf.trainable_variables() list the variables TensorFlow listed (made again
from the VariableDefs of the collections), and optimizers train them."""

import os

import numpy as np
import pytest
import tensorweave as tf
from tensorweave.proto import meta_graph_pb2, saved_model_pb2

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_meta_graphs")
SAVED_MODELS = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_saved_model")
EXPECTED = np.load(os.path.join(FIXTURES, "expected.npz"))
MODELS = ("ref", "resource", "partitioned", "sharded")
# What TensorFlow's tf.global_variables() listed (MANIFEST.txt): (name, shape, trainable).
TF_VARIABLES = {
    "ref": [("w:0", [3, 2], True), ("b:0", [2], True), ("step:0", [], False)],
    "partitioned": [
        ("p/part_0:0", [3, 3], True),
        ("p/part_1:0", [2, 3], True),
        ("step:0", [], False),
    ],
}
TF_VARIABLES["resource"] = TF_VARIABLES["sharded"] = TF_VARIABLES["ref"]
LEARNING_RATE = 0.125


def path(model):
    return os.path.join(FIXTURES, model)


def session():
    # The sharded model's variables were placed on /cpu:0 and /cpu:1.
    return tf.Session(config=tf.ConfigProto(device_count={"CPU": 2}))


def saved_values(model):
    prefix = f"{model}__"
    return {
        key[len(prefix) :]: EXPECTED[key]
        for key in EXPECTED.files
        if key.startswith(prefix) and key not in (f"{model}__x", f"{model}__loss")
    }


def described(variables):
    return [(v.name, v.shape.as_list(), v.trainable) for v in variables]


@pytest.mark.parametrize("model", MODELS)
def test_restores_what_tensorflow_saved(model):
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(path(model) + ".meta")
        variables = tf.global_variables()
        with session() as sess:
            saver.restore(sess, path(model))
            for variable in variables:
                np.testing.assert_array_equal(
                    sess.run(variable), saved_values(model)[variable.op.name]
                )
            loss = sess.run("loss:0", {"x:0": EXPECTED[f"{model}__x"]})
    np.testing.assert_allclose(loss, EXPECTED[f"{model}__loss"], rtol=1e-6)


@pytest.mark.parametrize("model", MODELS)
def test_variables_are_listed_as_tensorflow_listed_them(model):
    with tf.Graph().as_default():
        tf.train.import_meta_graph(path(model) + ".meta")
        assert described(tf.global_variables()) == TF_VARIABLES[model]
        assert described(tf.trainable_variables()) == [v for v in TF_VARIABLES[model] if v[2]]
        # One object per variable, in every collection that holds it.
        assert tf.trainable_variables()[0] is tf.global_variables()[0]
        resource = model == "resource" or model == "sharded"
        kinds = [tf.is_resource_variable(v) for v in tf.global_variables()]
        assert (
            kinds
            == {
                "ref": [False] * 3,
                "partitioned": [False] * 3,
                "resource": [True] * 3,
                "sharded": [False, True, False],
            }[model]
        )
        assert resource == any(kinds)


def expected_gradients(model):
    """d loss / d variable for loss = sum((x @ w + b)^2) at the saved values."""
    values, x = saved_values(model), EXPECTED[f"{model}__x"]
    if model == "partitioned":
        p = np.concatenate([values["p/part_0"], values["p/part_1"]])
        y = x @ p[:3, :2] + np.array([0.5, -1.0], np.float32)
        grad_p = np.zeros_like(p)
        grad_p[:3, :2] = x.T @ (2 * y)
        return {"p/part_0": grad_p[:3], "p/part_1": grad_p[3:]}
    y = x @ values["w"] + values["b"]
    return {"w": x.T @ (2 * y), "b": (2 * y).sum(axis=0)}


@pytest.mark.parametrize("model", MODELS)
def test_gradient_descent_trains_the_restored_variables(model):
    with tf.Graph().as_default() as graph:
        saver = tf.train.import_meta_graph(path(model) + ".meta")
        loss = graph.get_tensor_by_name("loss:0")
        train = tf.train.GradientDescentOptimizer(LEARNING_RATE).minimize(loss)
        with session() as sess:
            saver.restore(sess, path(model))
            sess.run(train, {"x:0": EXPECTED[f"{model}__x"]})
            trained = {v.op.name: sess.run(v) for v in tf.trainable_variables()}
    grads = expected_gradients(model)
    assert sorted(trained) == sorted(grads)
    for name, grad in grads.items():
        np.testing.assert_allclose(
            trained[name], saved_values(model)[name] - LEARNING_RATE * grad, rtol=1e-5, atol=1e-6
        )


@pytest.mark.parametrize("model", ["ref", "resource"])
def test_adam_slots_on_restored_variables_and_the_imported_saver_saves_them(model, tmp_path):
    x = EXPECTED[f"{model}__x"]
    with tf.Graph().as_default() as graph:
        saver = tf.train.import_meta_graph(path(model) + ".meta")
        loss = graph.get_tensor_by_name("loss:0")
        train = tf.train.AdamOptimizer(0.05).minimize(loss)
        # Adam's slots and powers are variables of their own.
        new_variables = [v for v in tf.global_variables() if v.op.name not in ("w", "b", "step")]
        with session() as sess:
            saver.restore(sess, path(model))
            sess.run(tf.variables_initializer(new_variables))
            for _ in range(5):
                sess.run(train, {"x:0": x})
            trained_loss = sess.run(loss, {"x:0": x})
            trained_w = sess.run(
                graph.get_tensor_by_name("w:0") if model == "ref" else "w/Read/ReadVariableOp:0"
            )
            prefix = saver.save(sess, str(tmp_path / "trained"))
    assert trained_loss < EXPECTED[f"{model}__loss"]
    # The imported saver's checkpoint restores in a new graph of the same meta graph.
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(path(model) + ".meta")
        with session() as sess:
            saver.restore(sess, prefix)
            w = next(v for v in tf.global_variables() if v.op.name == "w")
            np.testing.assert_array_equal(sess.run(w), trained_w)


def test_sharded_restore_is_all_or_nothing():
    """The sharded saver restores through one RestoreV2 per device: when one
    shard's key is missing, no variable changes (even those of shards that
    read)."""
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(path("sharded") + ".meta")
        step = next(v for v in tf.global_variables() if v.op.name == "step")
        with session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(step.assign(100))
            # The partitioned checkpoint holds "step" but not "w" or "b".
            with pytest.raises(tf.errors.NotFoundError):
                saver.restore(sess, path("partitioned"))
            assert sess.run(step) == 100


def test_import_scope_prefixes_variables_and_restore_still_works():
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(path("resource") + ".meta", import_scope="m")
        assert [v.name for v in tf.global_variables()] == ["m/w:0", "m/b:0", "m/step:0"]
        with session() as sess:
            saver.restore(sess, path("resource"))
            b = tf.global_variables()[1]
            np.testing.assert_array_equal(sess.run(b), saved_values("resource")["b"])


def test_tensorflow_saved_model_meta_graph_imports_with_its_saver_and_variables():
    # TensorFlow's SavedModel builder: resource and reference variables in one
    # saver, AssignVariableOp(handle, Identity(RestoreV2:i)).
    with open(os.path.join(SAVED_MODELS, "builder", "saved_model.pb"), "rb") as f:
        meta_graph_def = saved_model_pb2.SavedModel.FromString(f.read()).meta_graphs[0]
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(meta_graph_def)
        names = sorted(v.op.name for v in tf.global_variables())
        assert names == ["b", "loads", "vocab_path", "w"]
        w = next(v for v in tf.global_variables() if v.op.name == "w")
        assert tf.is_resource_variable(w)
        with session() as sess:
            saver.restore(sess, os.path.join(SAVED_MODELS, "builder", "variables", "variables"))
            np.testing.assert_array_equal(sess.run(w), np.arange(6, dtype=np.float32).reshape(3, 2))


@pytest.mark.parametrize("model", ["builder", "simple_save"])
def test_saved_model_loader_lists_the_variables(model):
    with tf.Session(graph=tf.Graph()) as sess:
        tf.saved_model.loader.load(sess, ["serve"], os.path.join(SAVED_MODELS, model))
        assert {"w", "b"} <= {v.op.name for v in tf.trainable_variables()}
        for variable in tf.global_variables():
            sess.run(variable)  # restored, so readable


def test_variable_from_variable_def():
    with tf.Graph().as_default():
        tf.train.import_meta_graph(path("sharded") + ".meta")
        w_def = meta_graph_pb2.VariableDef(
            variable_name="w:0",
            initializer_name="w/Assign",
            snapshot_name="w/read:0",
            trainable=True,
        )
        w = tf.Variable(variable_def=w_def)
        assert type(w) is tf.Variable and w.name == "w:0" and w.shape.as_list() == [3, 2]
        b_def = meta_graph_pb2.VariableDef(
            variable_name="b:0",
            initializer_name="b/Assign",
            snapshot_name="b/Read/ReadVariableOp:0",
            is_resource=True,
        )
        b = tf.Variable(variable_def=b_def)
        assert tf.is_resource_variable(b) and not b.trainable
        assert b.dtype == tf.float32 and b.shape.as_list() == [2]
        with session() as sess:
            sess.run([w.initializer, b.initializer])
            np.testing.assert_array_equal(sess.run(b), saved_values("sharded")["b"])
        with pytest.raises(ValueError, match="mutually exclusive"):
            tf.Variable(1.0, variable_def=w_def)
        with pytest.raises(ValueError, match="not a VarHandleOp"):
            tf.Variable(
                variable_def=meta_graph_pb2.VariableDef(
                    variable_name="w:0", initializer_name="w/Assign", is_resource=True
                )
            )


def test_our_exported_variables_come_back_as_variables():
    with tf.Graph().as_default():
        tf.Variable([1.0, 2.0], name="ref")
        tf.Variable(3.0, name="res", use_resource=True, trainable=False)
        exported = tf.train.export_meta_graph()
    with tf.Graph().as_default():
        tf.train.import_meta_graph(exported)
        assert described(tf.global_variables()) == [
            ("ref:0", [2], True),
            ("res:0", [], False),
        ]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(tf.global_variables()[1]) == 3.0


def test_meta_file_our_saver_writes_brings_the_variables_back(tmp_path):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        w = tf.Variable([[1.0], [2.0]], name="w")
        tf.Variable(0, name="count", trainable=False, use_resource=True)
        tf.reduce_sum(tf.matmul(x, w), name="loss")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            prefix = saver.save(sess, str(tmp_path / "model"))
    with tf.Graph().as_default() as graph:
        saver = tf.train.import_meta_graph(prefix + ".meta")
        assert described(tf.global_variables()) == [("w:0", [2, 1], True), ("count:0", [], False)]
        train = tf.train.GradientDescentOptimizer(0.5).minimize(graph.get_tensor_by_name("loss:0"))
        with tf.Session() as sess:
            saver.restore(sess, prefix)
            sess.run(train, {"x:0": [[1.0, 1.0]]})
            np.testing.assert_array_equal(sess.run(tf.global_variables()[0]), [[0.5], [1.5]])


def test_saver_from_a_saver_def():
    with open(path("sharded") + ".meta", "rb") as f:
        meta_graph_def = meta_graph_pb2.MetaGraphDef.FromString(f.read())
    with tf.Graph().as_default():
        tf.train.import_meta_graph(meta_graph_def)
        saver = tf.train.Saver(saver_def=meta_graph_def.saver_def)
        assert saver.saver_def.restore_op_name == meta_graph_def.saver_def.restore_op_name
        with session() as sess:
            saver.restore(sess, path("sharded"))
            b = tf.global_variables()[1]
            np.testing.assert_array_equal(sess.run(b), saved_values("sharded")["b"])
        with pytest.raises(ValueError, match="restore_op_name"):
            tf.train.Saver(
                saver_def=tf.train.SaverDef(
                    filename_tensor_name="save/Const:0", save_tensor_name="save/Identity:0"
                )
            )
