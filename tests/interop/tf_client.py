"""TensorFlow's own client (tf.compat.v1.Session over gRPC) running one
scenario against a target, for the interop tests. Run with the interop
virtualenv's Python:

    python tests/interop/tf_client.py grpc://localhost:2222 affine

Prints one line of JSON: the scenario's results, or {"error": {"code",
"type", "message"}} when a call failed unexpectedly. Every run has a timeout,
so a server that never answers ends the scenario with DeadlineExceeded.
"""

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf

v1 = tf.compat.v1
# TensorFlow 1.x graphs: reference variables (VariableV2), as tensorweave has.
v1.disable_v2_behavior()

CALL_TIMEOUT_MS = 30000


def session(target):
    config = v1.ConfigProto(operation_timeout_in_ms=CALL_TIMEOUT_MS)
    return v1.Session(target, config=config)


def error_of(call):
    """The (code, type name) of the OpError `call` raises, or None."""
    try:
        call()
    except tf.errors.OpError as error:
        return {"code": error.error_code, "type": type(error).__name__, "message": error.message}
    return None


def affine(target):
    x = v1.placeholder(tf.float32, [1, 4], name="x")
    y = tf.add(x * 2.0, 1.0, name="y")
    doubled = tf.identity(x * 2.0, name="doubled")
    feed = np.arange(4, dtype=np.float32).reshape(1, 4)
    with session(target) as sess:
        single = sess.run(y, {x: feed})
        both = sess.run({"y": y, "doubled": doubled}, {x: feed})
    return {
        "y": single.tolist(),
        "dict_y": both["y"].tolist(),
        "dict_doubled": both["doubled"].tolist(),
    }


def variables(target):
    v = v1.Variable(1.0, name="v")
    step = v1.assign_add(v, 2.0)
    with session(target) as sess:
        sess.run(v.initializer)
        values = [float(sess.run(step)) for _ in range(3)]
        final = float(sess.run(v))
    return {"values": values, "final": final}


def errors(target):
    uninitialized = v1.Variable(5.0, name="never_initialized")
    x = v1.placeholder(tf.float32, [None], name="x")
    reshaped = tf.reshape(x, [3])
    with session(target) as sess:
        return {
            "uninitialized": error_of(lambda: sess.run(uninitialized)),
            "bad_reshape": error_of(lambda: sess.run(reshaped, {x: np.ones(4, np.float32)})),
            "unfed_placeholder": error_of(lambda: sess.run(reshaped)),
        }


def extend_callable_devices(target):
    x = v1.placeholder(tf.float32, [2], name="x")
    y = x + 1.0
    with session(target) as sess:
        first = sess.run(y, {x: [1.0, 2.0]})
        z = y * 3.0  # added after a run: the client extends the master's graph
        second = sess.run(z, {x: [1.0, 2.0]})
        step = sess.make_callable(z, [x])
        third = step(np.array([0.0, 1.0], np.float32))
        devices = [device.name for device in sess.list_devices()]
    return {
        "first": first.tolist(),
        "second": second.tolist(),
        "callable": third.tolist(),
        "devices": devices,
    }


def timeout(target):
    # Seconds of matrix products (ops every server has), against a 100 ms
    # timeout.
    product = v1.random_uniform([1500, 1500])
    for _ in range(12):
        product = tf.matmul(product, product)
    options = v1.RunOptions(timeout_in_ms=100)
    with session(target) as sess:
        return {"timeout": error_of(lambda: sess.run(product, options=options))}


def control_flow(target):
    # TensorFlow 1.x control flow as TensorFlow's own client builds it (the
    # session extends with NextIteration back edges), with its gradients: a
    # while loop's gradient keeps forward values in StackV2 stacks.
    x = v1.placeholder(tf.float32, [], name="x")
    p = v1.placeholder(tf.bool, [], name="p")
    y = v1.cond(p, lambda: x * 2.0, lambda: x - 1.0)
    _, power = v1.while_loop(
        lambda i, acc: i < 5, lambda i, acc: (i + 1, acc * x), [tf.constant(0), tf.constant(1.0)]
    )
    (power_grad,) = tf.gradients(power, x)
    (cond_grad,) = tf.gradients(y, x)
    with session(target) as sess:
        return {
            "cond": [float(sess.run(y, {x: 3.0, p: taken})) for taken in (True, False)],
            "cond_grad": [
                float(sess.run(cond_grad, {x: 3.0, p: taken})) for taken in (True, False)
            ],
            "power": float(sess.run(power, {x: 2.0})),
            "power_grad": float(sess.run(power_grad, {x: 2.0})),
        }


def functions(target):
    # TensorFlow 2.x's control flow (If, While with a function library) and a
    # tf.function call, built by TensorFlow's client in graph mode.
    v1.enable_control_flow_v2()
    try:
        x = v1.placeholder(tf.float32, [], name="x")
        p = v1.placeholder(tf.bool, [], name="p")
        y = v1.cond(p, lambda: x * 2.0, lambda: x - 1.0)
        _, power = v1.while_loop(
            lambda i, acc: i < 5,
            lambda i, acc: (i + 1, acc * x),
            [tf.constant(0), tf.constant(1.0)],
        )
        square = tf.function(lambda v: v * v)
        squared = square(x)
    finally:
        v1.disable_control_flow_v2()
    ops = {op.type for op in v1.get_default_graph().get_operations()}
    with session(target) as sess:
        return {
            "ops": sorted(
                ops
                & {
                    "If",
                    "StatelessIf",
                    "While",
                    "StatelessWhile",
                    "StatefulPartitionedCall",
                    "PartitionedCall",
                }
            ),
            "cond": [float(sess.run(y, {x: 3.0, p: taken})) for taken in (True, False)],
            "power": float(sess.run(power, {x: 2.0})),
            "squared": float(sess.run(squared, {x: 3.0})),
        }


def partial_run(target):
    a = v1.placeholder(tf.float32, [], name="a")
    b = v1.placeholder(tf.float32, [], name="b")
    c = v1.placeholder(tf.float32, [], name="c")
    r1 = tf.add(a, b, name="r1")
    r2 = tf.multiply(r1, c, name="r2")
    with session(target) as sess:
        h = sess.partial_run_setup([r1, r2], [a, b, c])
        first = float(sess.partial_run(h, r1, feed_dict={a: 1, b: 2}))
        second = float(sess.partial_run(h, r2, feed_dict={c: first * 17}))
        h2 = sess.partial_run_setup([r1, r2], [a, b, c])
        not_computable = error_of(lambda: sess.partial_run(h2, r2, feed_dict={a: 1, b: 2}))
        sess.partial_run(h2, r1, feed_dict={a: 1, b: 2})
        already_fed = error_of(lambda: sess.partial_run(h2, r2, feed_dict={a: 1, c: 2}))
        already_fetched = error_of(lambda: sess.partial_run(h2, r1, feed_dict={c: 2}))
        last = float(sess.partial_run(h2, r2, feed_dict={c: 5}))
        ended = error_of(lambda: sess.partial_run(h2, r1, feed_dict={a: 1, b: 2}))
        unfinished = sess.partial_run_setup([r1, r2], [a, b, c])
        sess.partial_run(unfinished, r1, feed_dict={a: 1, b: 2})  # closed with the session
    return {
        "first": first,
        "second": second,
        "handles_differ": h != h2,
        "not_computable": not_computable,
        "already_fed": already_fed,
        "already_fetched": already_fetched,
        "last": last,
        "ended": ended,
    }


SCENARIOS = {
    "partial_run": partial_run,
    "functions": functions,
    "control_flow": control_flow,
    "affine": affine,
    "variables": variables,
    "errors": errors,
    "extend_callable_devices": extend_callable_devices,
    "timeout": timeout,
}


def main():
    target, scenario = sys.argv[1], sys.argv[2]
    try:
        result = SCENARIOS[scenario](target)
    except tf.errors.OpError as error:
        result = {
            "error": {
                "code": error.error_code,
                "type": type(error).__name__,
                "message": error.message,
            }
        }
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
