"""Checkpoints from elsewhere, read without TensorFlow: one TensorFlow 2.21
wrote (tests/fixtures/tf_checkpoint, by record_checkpoint.py) and one in
tensorweave's older `.twckpt` format (tests/fixtures/tw_legacy_checkpoint, by
record_legacy_checkpoint.py), and one of variables TensorFlow saved in
partitions (tests/fixtures/tf_checkpoint_partitioned). All restore exactly through the Saver, the
checkpoint readers and init_from_checkpoint; and the Saver, given the same
variables, writes files byte for byte identical to TensorFlow's."""

import pathlib
import shutil
import sys

import numpy as np
import pytest
import tensorweave as tf

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"
if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))

from checkpoint_values import checkpoint_values, partitioned_values, same_value

SOURCES = ["tf_checkpoint", "tw_legacy_checkpoint"]


@pytest.fixture(params=SOURCES)
def checkpoint_dir(request, tmp_path):
    """A copy of a fixture directory (its state file holds relative paths)."""
    target = tmp_path / request.param
    shutil.copytree(FIXTURES / request.param, target)
    return target


def make_variables():
    values = checkpoint_values()
    variables = {}
    for name, value in values.items():
        zeros = np.zeros_like(value) if np.asarray(value).dtype != object else [b""] * len(value)
        variables[name] = tf.Variable(np.asarray(zeros, dtype=np.asarray(value).dtype), name=name)
    return values, variables


def test_saver_restores_every_variable_exactly(checkpoint_dir):
    prefix = tf.train.latest_checkpoint(str(checkpoint_dir))
    assert prefix == str(checkpoint_dir / "model-3")
    values, variables = make_variables()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        tf.train.Saver().restore(sess, prefix)
        restored = sess.run(variables)
    for name, value in values.items():
        assert same_value(restored[name], value), name


def test_readers_list_and_load_every_tensor(checkpoint_dir):
    values = checkpoint_values()
    assert tf.train.list_variables(str(checkpoint_dir)) == sorted(
        (name, list(np.shape(value))) for name, value in values.items()
    )
    reader = tf.train.load_checkpoint(str(checkpoint_dir))
    dtypes = reader.get_variable_to_dtype_map()
    for name, value in values.items():
        assert same_value(reader.get_tensor(name), value), name
        assert dtypes[name] == tf.as_dtype(np.asarray(value).dtype if name != "vocab" else "string")
    assert b"dense/kernel (DT_FLOAT) [3,4]\n" in reader.debug_string()
    assert b"half (DT_HALF) [4]\n" in reader.debug_string()


def test_init_from_checkpoint_over_either_format(checkpoint_dir):
    values = checkpoint_values()
    kernel = tf.Variable(np.zeros((3, 4), np.float32), name="net/dense/kernel")
    step = tf.Variable(np.int64(0), name="step")
    tf.train.init_from_checkpoint(
        str(checkpoint_dir), {"dense/": "net/dense/", "global_step": step}
    )
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert same_value(sess.run(kernel), values["dense/kernel"])
        assert sess.run(step) == values["global_step"]


def test_saver_writes_the_same_bytes_as_tensorflow(tmp_path):
    values, variables = make_variables()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for name, variable in variables.items():
            sess.run(variable.assign(values[name]))
        prefix = tf.train.Saver().save(sess, str(tmp_path / "model"), 3, write_meta_graph=False)
    for suffix in (".index", ".data-00000-of-00001"):
        ours = pathlib.Path(prefix + suffix).read_bytes()
        theirs = (FIXTURES / "tf_checkpoint" / ("model-3" + suffix)).read_bytes()
        assert ours == theirs, suffix


def test_partitioned_variables_restore_whole(tmp_path):
    prefix = str(FIXTURES / "tf_checkpoint_partitioned" / "partitioned-1")
    values = {name: value for name, (value, _, _) in partitioned_values().items()}
    reader = tf.train.NewCheckpointReader(prefix)
    assert reader.get_variable_to_shape_map() == {n: list(v.shape) for n, v in values.items()}
    for name, value in values.items():
        assert same_value(reader.get_tensor(name), value), name
    variables = {
        name: tf.Variable(np.zeros_like(value), name=name) for name, value in values.items()
    }
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        tf.train.Saver().restore(sess, prefix)
        restored = sess.run(variables)
    for name, value in values.items():
        assert same_value(restored[name], value), name


def test_restore_v2_cuts_partitions_as_tensorflows_saver_asks_for_them():
    # TensorFlow's Saver restores each partition of a partitioned variable
    # with a shape_and_slices spec ("<full shape> <start,length:...>").
    prefix = str(FIXTURES / "tf_checkpoint_partitioned" / "partitioned-1")
    value = partitioned_values()["part/r"][0]
    graph = tf.get_default_graph()
    restored = graph.create_op(
        "RestoreV2",
        [
            tf.constant(prefix),
            tf.constant(["part/r", "part/r"]),
            tf.constant(["200 3 0,67:-", "200 3 133,67:1,2"]),
        ],
        attrs={"dtypes": [tf.int64, tf.int64]},
    ).outputs
    with tf.Session() as sess:
        first, last = sess.run(restored)
    np.testing.assert_array_equal(first, value[:67])
    np.testing.assert_array_equal(last, value[133:, 1:])
