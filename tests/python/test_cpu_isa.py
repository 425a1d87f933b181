"""The hot float kernels on every instruction set this CPU runs
(runtime/kernels/cpu_dispatch.h): each TW_CPU_ISA value runs the same ops
in a fresh process, and every run is checked against numpy and against
the baseline run (exact ops bitwise, transcendentals and sums to float
tolerance)."""

import os
import subprocess
import sys

import numpy as np
import pytest

_REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# Runs in a child process: every op on float32 inputs with tails (an odd
# length) and broadcasting, results saved to the .npz named by argv[1].
_CHILD = r"""
import sys
import numpy as np
import tensorweave as tf

rng = np.random.RandomState(0)
x = rng.uniform(-4, 4, 10007).astype(np.float32)
y = rng.uniform(0.5, 4, 10007).astype(np.float32)
x[::997] = np.nan
logits = rng.uniform(-30, 30, (13, 1001)).astype(np.float32)
grad = rng.normal(size=10007).astype(np.float32)
start = rng.uniform(-1, 1, 10007).astype(np.float32)
out = {}
with tf.Graph().as_default():
    xs, ys, ls = tf.constant(x), tf.constant(y), tf.constant(logits)
    ops = {
        "add": xs + ys, "sub": xs - 1.5, "mul": 2.5 * ys, "div": xs / ys,
        "maximum": tf.maximum(xs, ys), "minimum": tf.minimum(xs, 0.25),
        "exp": tf.exp(xs * 30.0), "log": tf.log(ys), "tanh": tf.tanh(xs),
        "sigmoid": tf.sigmoid(xs), "sqrt": tf.sqrt(ys), "rsqrt": tf.rsqrt(ys),
        "relu": tf.nn.relu(xs), "sum_rows": tf.reduce_sum(ls, axis=1),
        "sum_columns": tf.reduce_sum(ls, axis=0), "max_rows": tf.reduce_max(ls, axis=1),
        "max_columns": tf.reduce_max(ls, axis=0), "min_all": tf.reduce_min(ys),
        "softmax": tf.nn.softmax(ls), "log_softmax": tf.nn.log_softmax(ls),
        "bias_add": tf.nn.bias_add(ls, ls[0]),
    }
    var = tf.Variable(start)
    train = tf.train.AdamOptimizer(0.01).apply_gradients([(tf.constant(grad), var)])
    with tf.Session() as sess:
        out.update(sess.run(ops))
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(train)
        out["adam"] = sess.run(var)
np.savez(sys.argv[1], **out)
"""

# Exact ops give the same bits on every ISA; the rest are compared within
# float tolerance. Sums of 1001 logits up to 30 in size add in a different
# order per ISA: float error grows with the sum of magnitudes (~3e4 here).
_SUM_ATOL = 1001 * 30 * 6e-8
_EXACT = {
    "add",
    "sub",
    "mul",
    "div",
    "maximum",
    "minimum",
    "sqrt",
    "relu",
    "max_rows",
    "max_columns",
    "min_all",
    "bias_add",
    "adam",
}


def _run(tmp_path, isa):
    path = tmp_path / f"{isa}.npz"
    env = dict(os.environ, TW_CPU_ISA=isa, PYTHONPATH=os.path.join(_REPO, "python"))
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(np.load(path)), done.stderr


def _numpy_results():
    rng = np.random.RandomState(0)
    x = rng.uniform(-4, 4, 10007).astype(np.float32)
    y = rng.uniform(0.5, 4, 10007).astype(np.float32)
    x[::997] = np.nan
    logits = rng.uniform(-30, 30, (13, 1001)).astype(np.float32)
    grad = rng.normal(size=10007).astype(np.float32)
    var = rng.uniform(-1, 1, 10007).astype(np.float32)
    shifted = logits - logits.max(axis=1, keepdims=True)
    exps = np.exp(shifted.astype(np.float64))
    m = np.zeros_like(var)
    v = np.zeros_like(var)
    for t in range(1, 4):
        lr_t = 0.01 * np.sqrt(1 - 0.999**t) / (1 - 0.9**t)
        m = m + (grad - m) * (1 - 0.9)
        v = v + (grad * grad - v) * (1 - 0.999)
        var = var - m * lr_t / (np.sqrt(v) + 1e-8)
    with np.errstate(invalid="ignore", over="ignore"):
        return {
            "add": x + y,
            "sub": x - np.float32(1.5),
            "mul": np.float32(2.5) * y,
            "div": x / y,
            "maximum": np.maximum(x, y),
            "minimum": np.minimum(x, np.float32(0.25)),
            "exp": np.exp(x * np.float32(30)),
            "log": np.log(y),
            "tanh": np.tanh(x),
            "sigmoid": 1 / (1 + np.exp(-x.astype(np.float64))),
            "sqrt": np.sqrt(y),
            "rsqrt": 1 / np.sqrt(y.astype(np.float64)),
            "relu": np.maximum(x, np.float32(0)),
            "sum_rows": logits.astype(np.float64).sum(axis=1),
            "sum_columns": logits.astype(np.float64).sum(axis=0),
            "max_rows": logits.max(axis=1),
            "max_columns": logits.max(axis=0),
            "min_all": y.min(),
            "softmax": exps / exps.sum(axis=1, keepdims=True),
            "log_softmax": shifted - np.log(exps.sum(axis=1, keepdims=True)),
            "bias_add": logits + logits[0],
            "adam": var,
        }


def _isas():
    """baseline, avx2 and avx512, as far as /proc/cpuinfo says this CPU goes."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = f.read()
    except OSError:
        return ["baseline"]
    isas = ["baseline"]
    if " avx2" in flags and " fma" in flags:
        isas.append("avx2")
        if all(f" {name}" in flags for name in ("avx512f", "avx512dq", "avx512bw", "avx512vl")):
            isas.append("avx512")
    return isas


def test_every_isa_matches_numpy_and_the_baseline(tmp_path):
    expected = _numpy_results()
    baseline, _ = _run(tmp_path, "baseline")
    for isa in _isas():
        results = baseline if isa == "baseline" else _run(tmp_path, isa)[0]
        assert set(results) == set(expected)
        for name, want in expected.items():
            got = results[name]
            atol = _SUM_ATOL if name.startswith("sum") else 2e-5
            np.testing.assert_allclose(
                got,
                want.astype(np.float32),
                rtol=2e-5,
                atol=atol,
                err_msg=f"{isa} {name} against numpy",
            )
            if name in _EXACT:
                np.testing.assert_array_equal(
                    got.view(np.uint32),
                    baseline[name].view(np.uint32),
                    err_msg=f"{isa} {name} against baseline",
                )
            else:
                np.testing.assert_allclose(
                    got,
                    baseline[name],
                    rtol=2e-6,
                    atol=atol if name.startswith("sum") else 1e-6,
                    err_msg=f"{isa} {name} against baseline",
                )


def test_unknown_isa_is_reported_and_ignored(tmp_path):
    results, stderr = _run(tmp_path, "avx1024")
    assert "ignoring TW_CPU_ISA=avx1024" in stderr
    assert np.isnan(results["add"][0])


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
