"""Direction 1: tensorweave clients (tf.Session("grpc://...") and the C API)
run graphs on a real TensorFlow server (tf.distribute.Server in the interop
virtualenv's Python, one per test, killed by pid after it)."""

import pathlib
import threading
import time

import cffi
import numpy as np
import pytest
import tensorweave as tf
from capi_helpers import CODES, Api, header_declarations, proto_classes

REPO = pathlib.Path(__file__).resolve().parents[2]


def affine_graph():
    x = tf.placeholder(tf.float32, [1, 4], name="x")
    y = tf.add(x * 2.0, 1.0, name="y")
    return x, y


FEED = np.arange(4, dtype=np.float32).reshape(1, 4)


def test_feeds_fetches_and_targets(tf_server):
    x, y = affine_graph()
    doubled = tf.identity(x * 2.0, name="doubled")
    counter = tf.Variable(0.0, name="counter")
    bump = tf.assign_add(counter, 1.0, name="bump")
    with tf.Session(tf_server) as sess:
        np.testing.assert_array_equal(sess.run(y, {x: FEED}), FEED * 2 + 1)
        both = sess.run({"y": y, "doubled": doubled}, {x: FEED})
        np.testing.assert_array_equal(both["y"], FEED * 2 + 1)
        np.testing.assert_array_equal(both["doubled"], FEED * 2)
        first, second = sess.run([doubled, y], {x: FEED})
        np.testing.assert_array_equal(first, FEED * 2)
        np.testing.assert_array_equal(second, FEED * 2 + 1)
        sess.run(counter.initializer)
        assert sess.run([y, bump], {x: FEED})[1] == 1.0  # a fetch and a target
        sess.run(bump.op)  # a target alone
        assert sess.run(counter) == 2.0


def test_variables_are_updated_across_runs_and_shared_across_sessions(tf_server):
    v = tf.Variable(1.0, name="v")
    step = tf.assign_add(v, 2.0)
    with tf.Session(tf_server) as sess:
        sess.run(v.initializer)
        assert [float(sess.run(step)) for _ in range(3)] == [3.0, 5.0, 7.0]
    # A TensorFlow server keeps variables in its resource containers: a new
    # session on the same graph sees the value the first one left.
    with tf.Session(tf_server) as sess:
        assert sess.run(v) == 7.0


def test_errors_surface_with_tensorflows_codes(tf_server):
    never_initialized = tf.Variable(5.0, name="never_initialized")
    x = tf.placeholder(tf.float32, [None], name="x")
    reshaped = tf.reshape(x, [3])
    with tf.Session(tf_server) as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="never_initialized"):
            sess.run(never_initialized)
        with pytest.raises(tf.errors.InvalidArgumentError, match="reshape"):
            sess.run(reshaped, {x: np.ones(4, np.float32)})
        with pytest.raises(tf.errors.InvalidArgumentError, match="must feed a value"):
            sess.run(reshaped)
        # The session still works after errors.
        np.testing.assert_array_equal(sess.run(reshaped, {x: np.ones(3, np.float32)}), [1, 1, 1])


def test_extend_after_a_run_and_make_callable(tf_server):
    x, y = affine_graph()
    with tf.Session(tf_server) as sess:
        np.testing.assert_array_equal(sess.run(y, {x: FEED}), FEED * 2 + 1)
        z = y * 3.0  # new nodes after a run: ExtendSession
        np.testing.assert_array_equal(sess.run(z, {x: FEED}), (FEED * 2 + 1) * 3)
        step = sess.make_callable([y, z], [x])
        for scale in (1.0, 2.0):
            got_y, got_z = step(FEED * scale)
            np.testing.assert_array_equal(got_y, FEED * scale * 2 + 1)
            np.testing.assert_array_equal(got_z, (FEED * scale * 2 + 1) * 3)


def test_list_devices_names_the_servers_devices(tf_server):
    with tf.Session(tf_server) as sess:
        devices = sess.list_devices()
    assert [device.name for device in devices] == ["/job:localhost/replica:0/task:0/device:CPU:0"]
    assert devices[0].device_type == "CPU"


def test_reset_clears_the_servers_variables(tf_server):
    v = tf.Variable(1.0, name="v")
    with tf.Session(tf_server) as sess:
        sess.run(v.initializer)
        assert sess.run(v) == 1.0
    tf.Session.reset(tf_server)
    with tf.Session(tf_server) as sess, pytest.raises(tf.errors.FailedPreconditionError):
        sess.run(v)


def test_a_run_options_timeout_is_deadline_exceeded(tf_server):
    # Many seconds of matrix products against a 100 ms timeout.
    product = tf.random_uniform([1500, 1500])
    for _ in range(60):
        product = tf.matmul(product, product)
    with tf.Session(tf_server) as sess:
        started = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(product, options=tf.RunOptions(timeout_in_ms=100))
        assert time.monotonic() - started < 5


# --- The C API ---------------------------------------------------------------


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    ffi = cffi.FFI()
    ffi.cdef(header_declarations(REPO / "c_api" / "c_api.h"))
    lib = ffi.dlopen(str(REPO / "build" / "lib" / "libtensorweave.so"))
    return Api(ffi, lib, proto_classes(REPO, tmp_path_factory.mktemp("protos")))


def test_c_api_session_runs_on_the_tf_server(api, tf_server):
    lib = api.lib
    graph = lib.TF_NewGraph()
    x = api.placeholder(graph, "x", shape=[1, 4])
    two = api.const(graph, "two", np.float32(2))
    one = api.const(graph, "one", np.float32(1))
    y = api.binary(graph, "AddV2", "y", api.binary(graph, "Mul", "twice", x, two), one)
    opts = api.options(target=tf_server)
    session = api.call(lib.TF_NewSession, graph, opts)
    try:
        (result,) = api.run(session, feeds=[((x, 0), FEED)], fetches=[(y, 0)])
        np.testing.assert_array_equal(result, FEED * 2 + 1)
        api.call(lib.TF_CloseSession, session)
    finally:
        api.call(lib.TF_DeleteSession, session)
        lib.TF_DeleteSessionOptions(opts)
        lib.TF_DeleteGraph(graph)


def test_c_api_deprecated_session_gets_not_found_from_the_tf_master(api, tf_server):
    lib, ffi, pb = api.lib, api.ffi, api.pb
    graph_def = pb.GraphDef()
    node = graph_def.node.add(name="c", op="Const")
    node.attr["dtype"].type = 1  # DT_FLOAT
    node.attr["value"].tensor.dtype = 1
    node.attr["value"].tensor.float_val.append(3.0)
    data = graph_def.SerializeToString()
    opts = api.options(target=tf_server)
    session = api.call(lib.TF_NewDeprecatedSession, opts)
    status = lib.TF_NewStatus()
    try:
        api.call(lib.TF_ExtendGraph, session, data, len(data))
        missing = ffi.new("char[]", b"nope:0")  # kept alive while the array points at it
        names = ffi.new("const char*[]", [missing])
        outputs = ffi.new("TF_Tensor*[1]")
        lib.TF_Run(
            session,
            ffi.NULL,
            ffi.NULL,
            ffi.NULL,
            0,
            names,
            outputs,
            1,
            ffi.NULL,
            0,
            ffi.NULL,
            status,
        )
        assert api.code(status) == CODES["NOT_FOUND"]
        assert "nope" in api.message(status)

        present = ffi.new("char[]", b"c:0")
        names = ffi.new("const char*[]", [present])
        api.call(
            lib.TF_Run,
            session,
            ffi.NULL,
            ffi.NULL,
            ffi.NULL,
            0,
            names,
            outputs,
            1,
            ffi.NULL,
            0,
            ffi.NULL,
        )
        assert api.take(outputs[0]) == 3.0
    finally:
        lib.TF_CloseDeprecatedSession(session, status)
        lib.TF_DeleteDeprecatedSession(session, status)
        lib.TF_DeleteStatus(status)
        lib.TF_DeleteSessionOptions(opts)


def queue_graph(pb):
    """A TensorFlow FIFO queue shared by name across sessions, a dequeue that
    blocks until something is enqueued, and an enqueue of 5.0. Ops tensorweave
    does not have: the deprecated session sends a GraphDef as it is."""
    graph_def = pb.GraphDef()
    queue = graph_def.node.add(name="q", op="FIFOQueueV2")
    queue.attr["component_types"].list.type.append(1)  # DT_FLOAT
    queue.attr["shapes"].list.SetInParent()
    queue.attr["capacity"].i = 1
    queue.attr["container"].s = b""
    queue.attr["shared_name"].s = b"interop_long_wait"
    dequeue = graph_def.node.add(name="dequeue", op="QueueDequeueV2", input=["q"])
    dequeue.attr["component_types"].list.type.append(1)
    dequeue.attr["timeout_ms"].i = -1
    value = graph_def.node.add(name="five", op="Const")
    value.attr["dtype"].type = 1
    value.attr["value"].tensor.dtype = 1
    value.attr["value"].tensor.float_val.append(5.0)
    enqueue = graph_def.node.add(name="enqueue", op="QueueEnqueueV2", input=["q", "five"])
    enqueue.attr["Tcomponents"].list.type.append(1)
    enqueue.attr["timeout_ms"].i = -1
    return graph_def.SerializeToString()


def test_a_long_quiet_step_survives_keepalive_on_the_tf_server(api, tf_server):
    """A step that waits 10 s with nothing on the wire and no timeout: the
    client's keepalive pings must stay within what TensorFlow's gRPC server
    tolerates (it drops connections that ping too often: "too_many_pings")."""
    lib, ffi = api.lib, api.ffi
    data = queue_graph(api.pb)
    opts = api.options(target=tf_server)
    waiting = api.call(lib.TF_NewDeprecatedSession, opts)
    feeding = api.call(lib.TF_NewDeprecatedSession, opts)
    outcome = {}

    def wait_for_the_queue():
        name = ffi.new("char[]", b"dequeue:0")
        names = ffi.new("const char*[]", [name])
        outputs = ffi.new("TF_Tensor*[1]")
        status = lib.TF_NewStatus()
        lib.TF_Run(
            waiting, ffi.NULL, ffi.NULL, ffi.NULL, 0, names, outputs, 1, ffi.NULL, 0,
            ffi.NULL, status,
        )  # fmt: skip
        outcome["code"], outcome["message"] = api.code(status), api.message(status)
        if outcome["code"] == CODES["OK"]:
            outcome["value"] = float(api.take(outputs[0]))
        lib.TF_DeleteStatus(status)

    try:
        api.call(lib.TF_ExtendGraph, waiting, data, len(data))
        api.call(lib.TF_ExtendGraph, feeding, data, len(data))
        thread = threading.Thread(target=wait_for_the_queue, daemon=True)
        thread.start()
        thread.join(10)
        assert thread.is_alive(), outcome  # still waiting, connection alive
        target = ffi.new("char[]", b"enqueue")
        targets = ffi.new("const char*[]", [target])
        api.call(
            lib.TF_Run, feeding, ffi.NULL, ffi.NULL, ffi.NULL, 0, ffi.NULL, ffi.NULL, 0,
            targets, 1, ffi.NULL,
        )  # fmt: skip
        thread.join(30)
        assert not thread.is_alive()
        assert outcome == {"code": CODES["OK"], "message": "", "value": 5.0}
    finally:
        status = lib.TF_NewStatus()
        for session in (waiting, feeding):
            lib.TF_CloseDeprecatedSession(session, status)
            lib.TF_DeleteDeprecatedSession(session, status)
        lib.TF_DeleteStatus(status)
        lib.TF_DeleteSessionOptions(opts)


def test_our_conds_and_while_loops_run_on_a_tensorflow_server(tf_server):
    # The graphs tf.cond and tf.while_loop build here (with their
    # NextIteration back edges and cond gradients) are TensorFlow's own.
    x = tf.placeholder(tf.float32, [], name="x")
    p = tf.placeholder(tf.bool, [], name="p")
    y = tf.cond(p, lambda: x * 2.0, lambda: x - 1.0)
    _, power = tf.while_loop(
        lambda i, acc: i < 5, lambda i, acc: (i + 1, acc * x), [tf.constant(0), tf.constant(1.0)]
    )
    (cond_grad,) = tf.gradients(y, x)
    with tf.Session(tf_server) as sess:
        assert [sess.run(y, {x: 3.0, p: taken}) for taken in (True, False)] == [6.0, 2.0]
        assert [sess.run(cond_grad, {x: 3.0, p: taken}) for taken in (True, False)] == [2.0, 1.0]
        assert sess.run(power, {x: 2.0}) == 32.0


def test_partial_runs_on_a_tensorflow_server(tf_server):
    a = tf.placeholder(tf.float32, [], name="a")
    b = tf.placeholder(tf.float32, [], name="b")
    c = tf.placeholder(tf.float32, [], name="c")
    r1 = tf.add(a, b, name="r1")
    r2 = tf.multiply(r1, c, name="r2")
    config = tf.ConfigProto(operation_timeout_in_ms=30000)
    with tf.Session(tf_server, config=config) as sess:
        h = sess.partial_run_setup([r1, r2], [a, b, c])
        first = sess.partial_run(h, r1, feed_dict={a: 1, b: 2})
        assert first == 3
        assert sess.partial_run(h, r2, feed_dict={c: first * 17}) == 153
        h = sess.partial_run_setup([r1, r2], [a, b, c])
        assert sess.partial_run(h, r1, feed_dict={a: 1, b: 2}) == 3
        # TensorFlow's master refuses what tensorweave's refuses.
        with pytest.raises(tf.errors.InvalidArgumentError, match="has already been fetched"):
            sess.partial_run(h, r1, feed_dict={c: 2})
        assert sess.partial_run(h, r2, feed_dict={c: 5}) == 15
        unfinished = sess.partial_run_setup([r1, r2], [a, b, c])
        assert sess.partial_run(unfinished, r1, feed_dict={a: 1, b: 2}) == 3
