"""tf.layers.batch_normalization and tf.layers.BatchNormalization with
TensorFlow 1.x semantics: the same values as TensorFlow's own layer (the
recorded training programs of tests/fixtures/tf_batch_norm rebuilt with our
layer from the recorded initial values), variables and collections, update
ops, the training switch as a bool and as a tensor, and a TF1 conv + batch
norm program that trains and moves its statistics."""

import os

import numpy as np
import pytest
import tensorweave as tf
from recorded_graphs import imported, load_cases, load_graph_def

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_batch_norm")
RNG = np.random.RandomState(11)

# (fixture, axis, whether `training` is a placeholder) of the programs the
# generator built with tf.compat.v1.layers.batch_normalization(momentum=0.9).
RECORDED_PROGRAMS = [
    ("tf1_training_bn_nhwc", -1, False),
    ("tf1_training_nchw_tensor", 1, True),
    ("tf1_unfused", -1, True),
]


def _recorded_initial_values(path):
    """gamma, beta, moving_mean, moving_variance and the loss target as
    TensorFlow's program initialized them."""
    graph = imported(load_graph_def(path))
    names = ["gamma", "beta", "moving_mean", "moving_variance"]
    with tf.Session(graph=graph) as sess:
        sess.run("init")
        values = sess.run([f"batch_normalization/{n}:0" for n in names] + ["target:0"])
    return dict(zip(names + ["target"], values))


@pytest.mark.parametrize("name,axis,training_is_tensor", RECORDED_PROGRAMS)
def test_layer_gives_tensorflows_values(name, axis, training_is_tensor):
    path = os.path.join(FIXTURES, name + ".pb")
    initial = _recorded_initial_values(path)
    for feeds, fetches in load_cases(path):
        tf.reset_default_graph()
        x_value = feeds["x:0"]
        x = tf.placeholder(tf.float32, x_value.shape)
        training = tf.placeholder(tf.bool, []) if training_is_tensor else True
        y = tf.layers.batch_normalization(
            x,
            axis=axis,
            momentum=0.9,
            training=training,
            gamma_initializer=tf.constant_initializer(initial["gamma"]),
            beta_initializer=tf.constant_initializer(initial["beta"]),
            moving_mean_initializer=tf.constant_initializer(initial["moving_mean"]),
            moving_variance_initializer=tf.constant_initializer(initial["moving_variance"]),
        )
        loss = tf.reduce_mean(tf.square(y - initial["target"]))
        gradients = tf.gradients(loss, [x] + tf.trainable_variables())
        updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        assert len(updates) == 2
        feed = {x: x_value}
        if training_is_tensor:
            feed[training] = feeds["training:0"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            results = sess.run([y, loss] + gradients + updates, feed)
        for (fetch, expected), result in zip(fetches.items(), results):
            scale = float(np.max(np.abs(expected)))
            np.testing.assert_allclose(
                result, expected, rtol=1e-5, atol=1e-5 * scale, err_msg=fetch
            )


def test_variables_collections_and_names():
    x = tf.placeholder(tf.float32, [None, 4, 4, 3])
    tf.layers.batch_normalization(x, training=True)
    names = [v.op.name for v in tf.global_variables()]
    assert names == [
        "batch_normalization/gamma",
        "batch_normalization/beta",
        "batch_normalization/moving_mean",
        "batch_normalization/moving_variance",
    ]
    assert [v.op.name for v in tf.trainable_variables()] == names[:2]
    assert all(v.shape.as_list() == [3] for v in tf.global_variables())


def test_center_and_scale_off_drop_beta_and_gamma():
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.layers.batch_normalization(x, center=False, scale=False, training=True)
    assert [v.op.name for v in tf.global_variables()] == [
        "batch_normalization/moving_mean",
        "batch_normalization/moving_variance",
    ]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        value = RNG.randn(6, 3).astype(np.float32) * 4 + 1
        out = sess.run(y, {x: value})
    expected = (value - value.mean(0)) / np.sqrt(value.var(0) + 1e-3)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)


def test_update_ops_only_when_training_may_be_true():
    x = tf.placeholder(tf.float32, [None, 2, 2, 3])
    tf.layers.batch_normalization(x, training=False)
    assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []
    layer = tf.layers.BatchNormalization(name="bn")
    layer(x, training=True)
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert updates == layer.updates and len(updates) == 2
    assert [u.op.name for u in updates] == ["bn/AssignMovingAvg", "bn/AssignMovingAvg_1"]


def test_one_layer_called_twice_shares_its_variables():
    x = tf.placeholder(tf.float32, [None, 3])
    layer = tf.layers.BatchNormalization()
    layer(x, training=True)
    layer(x, training=False)
    assert len(tf.global_variables()) == 4
    tf.layers.batch_normalization(x, name="shared", training=True)
    tf.layers.batch_normalization(x, name="shared", reuse=True, training=False)
    assert len(tf.global_variables()) == 8


def test_fused_choice_follows_rank_and_axis():
    images = tf.placeholder(tf.float32, [None, 4, 4, 3])
    tf.layers.batch_normalization(images, training=True, name="fused")
    tf.layers.batch_normalization(images, training=True, fused=False, name="composed")
    tf.layers.batch_normalization(images, axis=2, training=True, name="middle_axis")
    types = {}
    for op in tf.get_default_graph().get_operations():
        types.setdefault(op.name.split("/")[0], set()).add(op.type)
    assert "FusedBatchNormV3" in types["fused"]
    assert "FusedBatchNormV3" not in types["composed"]
    assert "FusedBatchNormV3" not in types["middle_axis"]
    with pytest.raises(ValueError, match="Unsupported axis"):
        tf.layers.batch_normalization(images, axis=2, fused=True)


def test_composed_and_fused_layers_agree():
    value = RNG.randn(4, 3, 3, 5).astype(np.float32) * 2 + 3
    x = tf.placeholder(tf.float32, value.shape)
    training = tf.placeholder(tf.bool, [])
    fused = tf.layers.batch_normalization(x, training=training, name="a")
    composed = tf.layers.batch_normalization(x, training=training, fused=False, name="b")
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for flag in (True, False):
            got = sess.run([fused, composed] + updates, {x: value, training: flag})
            if flag:  # in inference their moving variances differ (below)
                np.testing.assert_allclose(got[0], got[1], rtol=1e-4, atol=1e-4)
            np.testing.assert_allclose(got[2], got[4], rtol=1e-5)  # moving means
            # The fused layer moves toward the unbiased variance (TensorFlow's
            # fused op output), the composed one toward the biased one.
            n = value.size / value.shape[-1]
            step_fused, step_composed = got[3] - 0.99, got[5] - 0.99
            # (A false training tensor leaves both as the first run left them.)
            np.testing.assert_allclose(step_fused, step_composed * n / (n - 1), rtol=1e-4)


def test_tf1_conv_program_trains_and_moves_its_statistics():
    images = RNG.randn(16, 6, 6, 2).astype(np.float32) * 3 + 5
    labels = (images.mean((1, 2, 3)) > 5).astype(np.int32)
    x = tf.placeholder(tf.float32, [None, 6, 6, 2])
    y_true = tf.placeholder(tf.int32, [None])
    is_training = tf.placeholder(tf.bool, [])
    h = tf.layers.conv2d(x, 4, 3, padding="same", use_bias=False)
    h = tf.nn.relu(tf.layers.batch_normalization(h, training=is_training, momentum=0.5))
    logits = tf.layers.dense(tf.layers.flatten(h), 2)
    loss = tf.losses.sparse_softmax_cross_entropy(y_true, logits)
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train = tf.train.AdamOptimizer(0.01).minimize(loss)
    moving_mean = next(v for v in tf.global_variables() if "moving_mean" in v.name)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        feed = {x: images, y_true: labels, is_training: True}
        first = sess.run(loss, feed)
        for _ in range(60):
            sess.run(train, feed)
        last = sess.run(loss, feed)
        trained_mean = sess.run(moving_mean)
        # Inference changes nothing and uses the moving statistics.
        sess.run(loss, {x: images, y_true: labels, is_training: False})
        assert np.array_equal(sess.run(moving_mean), trained_mean)
    assert last < 0.5 * first
    # Inputs have mean 5, so the conv outputs' moving mean moved from 0.
    assert np.all(np.abs(trained_mean) > 1e-3)


def test_trainable_false_keeps_gamma_and_beta_out_of_training():
    x = tf.placeholder(tf.float32, [None, 3])
    layer = tf.layers.BatchNormalization(trainable=False)
    layer(x, training=True)
    assert tf.trainable_variables() == []
    assert len(layer.non_trainable_weights) == 4 and layer.trainable_weights == []


def test_a_constant_training_tensor_builds_no_cond():
    x = tf.placeholder(tf.float32, [None, 2, 2, 3])
    tf.layers.batch_normalization(x, training=tf.constant(True))
    types = {op.type for op in tf.get_default_graph().get_operations()}
    assert "Switch" not in types and "Merge" not in types
    assert len(tf.get_collection(tf.GraphKeys.UPDATE_OPS)) == 2
