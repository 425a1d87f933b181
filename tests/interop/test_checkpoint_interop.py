"""Checkpoints both ways with real TensorFlow 2.21 (tf.compat.v1 graph mode, in
the interop Python as a subprocess with a timeout): a checkpoint TensorFlow's
Saver writes restores exactly in tensorweave, and one tensorweave's Saver
writes (plain and sharded) restores exactly in TensorFlow, whose
tf.train.load_checkpoint, list_variables and latest_checkpoint see the same
names, shapes and dtypes. The variables are tests/fixtures/checkpoint_values.py."""

import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import tensorweave as tf

REPO = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))

from checkpoint_values import checkpoint_values, same_value

TIMEOUT_SECONDS = 300

# Runs in TensorFlow's Python: argv = fixtures dir, action, checkpoint dir, sharded.
TF_SCRIPT = """
import json, os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
sys.path.insert(0, sys.argv[1])
import numpy as np
import tensorflow.compat.v1 as tf
from checkpoint_values import checkpoint_values, same_value
tf.disable_eager_execution()
action, directory, sharded = sys.argv[2], sys.argv[3], sys.argv[4] == "1"
values = checkpoint_values()
with tf.Graph().as_default():
    variables = {name: tf.Variable(np.zeros_like(v) if np.asarray(v).dtype != object
                                   else np.array([b""] * np.size(v), dtype=object).reshape(np.shape(v)),
                                   name=name)
                 for name, v in values.items()}
    saver = tf.train.Saver(sharded=sharded)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        if action == "save":
            for name, variable in variables.items():
                variable.load(values[name], sess)
            prefix = saver.save(sess, os.path.join(directory, "tfmodel"), global_step=3)
            print(json.dumps({"prefix": prefix}))
        else:
            prefix = tf.train.latest_checkpoint(directory)
            saver.restore(sess, prefix)
            restored = sess.run(variables)
            reader = tf.train.load_checkpoint(directory)
            print(json.dumps({
                "prefix": prefix,
                "same": {name: same_value(restored[name], values[name]) for name in values},
                "shapes": reader.get_variable_to_shape_map(),
                "dtypes": {k: v.name for k, v in reader.get_variable_to_dtype_map().items()},
                "listed": tf.train.list_variables(directory),
            }))
"""


def run_in_tensorflow(tf_python, *args):
    done = subprocess.run(
        [tf_python, "-c", TF_SCRIPT, str(FIXTURES), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def make_variables():
    values = checkpoint_values()
    variables = {}
    for name, value in values.items():
        zeros = np.zeros_like(value) if np.asarray(value).dtype != object else [b""] * len(value)
        variables[name] = tf.Variable(np.asarray(zeros, dtype=np.asarray(value).dtype), name=name)
    return values, variables


@pytest.mark.parametrize("sharded", [False, True])
def test_tensorflow_checkpoint_restores_exactly_in_tensorweave(tf_python, tmp_path, sharded):
    saved = run_in_tensorflow(tf_python, "save", tmp_path, int(sharded))
    prefix = tf.train.latest_checkpoint(str(tmp_path))
    assert prefix == saved["prefix"]
    values, variables = make_variables()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        tf.train.Saver().restore(sess, prefix)
        restored = sess.run(variables)
    for name, value in values.items():
        assert same_value(restored[name], value), name
    reader = tf.train.NewCheckpointReader(prefix)
    assert reader.get_variable_to_shape_map() == {
        name: list(np.shape(value)) for name, value in values.items()
    }
    for name, value in values.items():
        assert same_value(reader.get_tensor(name), value), name
        assert same_value(tf.train.load_variable(str(tmp_path), name), value), name


@pytest.mark.parametrize("sharded", [False, True])
def test_tensorweave_checkpoint_restores_exactly_in_tensorflow(tf_python, tmp_path, sharded):
    values, variables = make_variables()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for name, variable in variables.items():
            sess.run(variable.assign(values[name]))
        prefix = tf.train.Saver(sharded=sharded).save(sess, str(tmp_path / "twmodel"), 5)
    result = run_in_tensorflow(tf_python, "restore", tmp_path, int(sharded))
    assert result["prefix"] == prefix
    assert result["same"] == {name: True for name in values}
    ours = tf.train.NewCheckpointReader(prefix)
    assert result["shapes"] == ours.get_variable_to_shape_map()
    assert result["dtypes"] == {k: v.name for k, v in ours.get_variable_to_dtype_map().items()}
    assert [tuple(item) for item in result["listed"]] == tf.train.list_variables(str(tmp_path))
