"""`.meta` files tensorweave's Saver writes import in real TensorFlow 2.21
(tf.compat.v1, in the interop Python as a subprocess with a timeout):
tf.train.import_meta_graph gives back the variables (tf.global_variables()
and tf.trainable_variables() with our names and shapes, reference and
resource ones), the Saver it returns restores our checkpoint (plain and
sharded), and a gradient descent step on the restored variables gives what
the same step gives in tensorweave. The other direction (TensorFlow's
`.meta` files in tensorweave) is tests/python/test_tf_meta_graphs.py."""

import json
import subprocess

import numpy as np
import pytest
import tensorweave as tf

TIMEOUT_SECONDS = 300
X = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.25]], np.float32)
LEARNING_RATE = 0.125

# Runs in TensorFlow's Python: argv = the checkpoint prefix.
TF_SCRIPT = """
import json, os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_eager_execution()
prefix = sys.argv[1]
x = np.array(json.loads(sys.argv[2]), np.float32)
with tf.Graph().as_default() as graph:
    saver = tf.train.import_meta_graph(prefix + ".meta")
    described = lambda vs: [[v.name, v.shape.as_list(), v.trainable, v.op.type] for v in vs]
    loss = graph.get_tensor_by_name("loss:0")
    train = tf.train.GradientDescentOptimizer(float(sys.argv[3])).minimize(loss)
    with tf.Session() as sess:
        saver.restore(sess, prefix)
        restored_loss = sess.run(loss, {"x:0": x})
        sess.run(train, {"x:0": x})
        print(json.dumps({
            "global": described(tf.global_variables()),
            "trainable": described(tf.trainable_variables()),
            "loss": float(restored_loss),
            "trained": {v.op.name: sess.run(v).tolist() for v in tf.trainable_variables()},
        }))
"""


def run_in_tensorflow(tf_python, prefix):
    done = subprocess.run(
        [tf_python, "-c", TF_SCRIPT, prefix, json.dumps(X.tolist()), str(LEARNING_RATE)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("sharded", [False, True])
def test_tensorweave_meta_graph_imports_restores_and_trains_in_tensorflow(
    tf_python, tmp_path, sharded
):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2) / 4.0, name="w")
    b = tf.Variable(np.array([0.5, -1.0], np.float32), name="b", use_resource=True)
    tf.Variable(7, name="step", trainable=False, dtype=tf.int64)
    loss = tf.reduce_sum(tf.square(tf.matmul(x, w) + b), name="loss")
    saver = tf.train.Saver(sharded=sharded)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(w.assign(w * 2.0))
        prefix = saver.save(sess, str(tmp_path / "model"), global_step=3)
        ours_loss = sess.run(loss, {x: X})
        train = tf.train.GradientDescentOptimizer(LEARNING_RATE).minimize(loss)
        sess.run(train, {x: X})
        ours_trained = {"w": sess.run(w), "b": sess.run(b)}
    result = run_in_tensorflow(tf_python, prefix)
    assert result["global"] == [
        ["w:0", [3, 2], True, "VariableV2"],
        ["b:0", [2], True, "VarHandleOp"],
        ["step:0", [], False, "VariableV2"],
    ]
    assert result["trainable"] == result["global"][:2]
    np.testing.assert_allclose(result["loss"], ours_loss, rtol=1e-6)
    for name, value in ours_trained.items():
        np.testing.assert_allclose(result["trained"][name], value, rtol=1e-5, atol=1e-6)
