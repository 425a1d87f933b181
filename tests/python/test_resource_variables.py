"""Resource variables (VarHandleOp and the ops on its handle) through the
TF1 Python API: tf.get_variable / tf.Variable with use_resource, the
ResourceVariable methods, gradients, the five optimizers, Saver, and the
kernels' error codes and messages, which are TensorFlow 2.21's (checked
with /work/tfvenv: tf.compat.v1 graphs run in a session).
"""

import numpy as np
import pytest
import tensorweave as tf
from tensorweave.ops import resource_variable_ops as rv


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default() as graph:
        yield graph
    tf.disable_resource_variables()


# --- the Python objects ------------------------------------------------------------------


def test_get_variable_with_use_resource_builds_tensorflows_ops():
    v = tf.get_variable("v", [2, 3], use_resource=True, initializer=tf.ones_initializer())
    assert isinstance(v, rv.ResourceVariable) and isinstance(v, tf.Variable)
    assert v.name == "v:0" and v.op.name == "v" and v.op.type == "VarHandleOp"
    assert v.handle.dtype == tf.resource and v.handle.shape.as_list() == []
    assert v.dtype == tf.float32 and v.shape.as_list() == [2, 3]
    assert v.graph is tf.get_default_graph()
    assert v.op.get_attr("shared_name") == b"v"
    assert v.initializer.type == "AssignVariableOp" and v.initializer.name == "v/Assign"
    assert v.initial_value.name == "v/Initializer/ones:0"
    types = {op.name: op.type for op in tf.get_default_graph().get_operations()}
    assert types["v/IsInitialized/VarIsInitializedOp"] == "VarIsInitializedOp"
    assert types["v/Read/ReadVariableOp"] == "ReadVariableOp"
    assert "VariableV2" not in types.values()
    # Every value() is a new read; read_value() reads through an Identity.
    first, second = v.value(), v.value()
    assert first.op.type == second.op.type == "ReadVariableOp" and first is not second
    assert first.shape.as_list() == [2, 3]
    assert v.read_value().op.type == "Identity"


def test_use_resource_false_or_default_keeps_reference_variables():
    assert not tf.resource_variables_enabled()
    assert tf.get_variable("a", [1]).op.type == "VariableV2"
    assert tf.Variable(1.0, use_resource=False).op.type == "VariableV2"
    assert tf.Variable(1.0, use_resource=True).op.type == "VarHandleOp"


def test_enable_and_disable_resource_variables():
    tf.enable_resource_variables()
    assert tf.resource_variables_enabled() and tf.compat.v1.resource_variables_enabled()
    assert tf.Variable(1.0).op.type == "VarHandleOp"
    assert tf.get_variable("a", [1]).op.type == "VarHandleOp"
    assert tf.Variable(1.0, use_resource=False).op.type == "VariableV2"
    tf.compat.v1.disable_resource_variables()
    assert not tf.resource_variables_enabled()
    assert tf.Variable(1.0).op.type == "VariableV2"


def test_variable_scope_use_resource_is_inherited_and_overridden():
    with tf.variable_scope("outer", use_resource=True) as scope:
        assert scope.use_resource
        assert tf.get_variable("a", [1]).op.type == "VarHandleOp"
        assert tf.Variable(1.0, name="b").op.type == "VarHandleOp"
        with tf.variable_scope("inner"):
            assert tf.get_variable("c", [1]).op.type == "VarHandleOp"
        with tf.variable_scope("plain", use_resource=False):
            assert tf.get_variable("d", [1]).op.type == "VariableV2"
        assert tf.get_variable("e", [1], use_resource=False).op.type == "VariableV2"
    assert tf.get_variable("f", [1]).op.type == "VariableV2"
    with tf.variable_scope("outer", reuse=True):
        assert tf.get_variable("a", [1]).op.type == "VarHandleOp"


# --- values and updates ------------------------------------------------------------------


def test_initialize_read_assign_and_fetch():
    v = tf.Variable([1.0, 2.0], use_resource=True, name="v")
    assigned = v.assign([5.0, 6.0])
    added = v.assign_add([1.0, 1.0])
    subtracted = v.assign_sub([0.5, 0.5])
    silent = v.assign([0.0, 0.0], read_value=False)
    assert isinstance(silent, tf.Operation) and silent.type == "AssignVariableOp"
    assert assigned.op.type == "AssignVariableOp" and added.op.type == "AssignAddVariableOp"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])
        np.testing.assert_array_equal(sess.run(assigned), [5.0, 6.0])
        np.testing.assert_array_equal(sess.run(added), [6.0, 7.0])
        np.testing.assert_array_equal(sess.run(subtracted), [5.5, 6.5])
        np.testing.assert_array_equal(sess.run(tf.assign_add(v, [1.0, 1.0])), [6.5, 7.5])
        sess.run(silent)
        np.testing.assert_array_equal(v.eval(sess), [0.0, 0.0])
        assert sess.run(tf.is_variable_initialized(v))


def test_a_value_read_before_an_update_keeps_its_elements():
    """Copy-on-write: the update runs after the read (control dependency)
    and must not change the buffer the read returned."""
    v = tf.Variable(np.arange(4, dtype=np.float32), use_resource=True)
    before = v.value()
    with tf.control_dependencies([before]):
        update = rv.assign_add_variable_op(v.handle, np.ones(4, np.float32))
    with tf.control_dependencies([update]):
        after = v.value()
    with tf.Session() as sess:
        sess.run(v.initializer)
        old, new = sess.run([before, after])
        np.testing.assert_array_equal(old, [0, 1, 2, 3])
        np.testing.assert_array_equal(new, [1, 2, 3, 4])


def test_variables_keep_their_values_across_runs_and_start_uninitialized():
    v = tf.Variable(1.0, use_resource=True)
    step = v.assign_add(1.0)
    with tf.Session() as sess:
        assert not sess.run(v.is_initialized())
        sess.run(v.initializer)
        for expected in (2.0, 3.0, 4.0):
            assert sess.run(step) == expected
    with tf.Session() as sess:  # a new in-process session: new devices
        assert not sess.run(v.is_initialized())


def test_a_server_keeps_resource_variables_across_sessions():
    server = tf.train.Server.create_local_server()
    try:
        v = tf.Variable(1.0, use_resource=True)
        with tf.Session(server.target) as sess:
            sess.run(v.initializer)
            sess.run(v.assign_add(2.0))
        with tf.Session(server.target) as sess:
            assert sess.run(v) == 3.0
    finally:
        server.stop()


def test_session_reset_drops_resource_variables_as_tensorflow():
    """Reset empties the default container (or the ones named) of resource
    variables too, in process and on a server."""
    v = tf.Variable(3.0, use_resource=True)
    with tf.container("foo"):
        in_foo = tf.Variable(4.0, use_resource=True)
    init = tf.global_variables_initializer()
    with tf.Session() as sess:
        sess.run(init)
        tf.Session.reset("")
        assert sess.run([v.is_initialized(), in_foo.is_initialized()]) == [False, True]
        tf.Session.reset("", ["foo"])
        assert not sess.run(in_foo.is_initialized())
    server = tf.train.Server.create_local_server()
    try:
        with tf.Session(server.target) as sess:
            sess.run(init)
        tf.Session.reset(server.target)
        with tf.Session(server.target) as sess:
            assert sess.run([v.is_initialized(), in_foo.is_initialized()]) == [False, True]
    finally:
        server.stop()


def test_reading_an_uninitialized_variable_fails_as_tensorflow():
    v = tf.get_variable("v", [2], use_resource=True)
    with tf.Session() as sess, pytest.raises(tf.errors.FailedPreconditionError) as raised:
        sess.run(v)
    assert raised.value.message.startswith(
        "Could not find variable v. This could mean that the variable has been deleted. In "
        "TF1, it can also mean the variable is uninitialized. Debug info: container=localhost"
    )


def test_report_uninitialized_variables_names_resource_variables():
    a = tf.get_variable("a", [1], use_resource=True)
    tf.get_variable("b", [1])
    c = tf.get_variable("c", [1], use_resource=True)
    report = tf.report_uninitialized_variables()
    with tf.Session() as sess:
        assert list(sess.run(report)) == [b"a", b"b", b"c"]
        sess.run([a.initializer, c.initializer])
        assert list(sess.run(report)) == [b"b"]
        sess.run(tf.global_variables_initializer())
        assert list(sess.run(report)) == []


def _raw_run(fetch_builder, setup=None):
    """Runs fetch_builder(handle) on a float [2] variable holding [1, 2]."""
    handle = rv.var_handle_op(tf.float32, [2], shared_name="w")
    init = rv.assign_variable_op(handle, np.array([1.0, 2.0], np.float32))
    fetch = fetch_builder(handle)
    with tf.Session() as sess:
        sess.run(init)
        return sess.run(fetch)


def _unknown(value):
    """value (float32 unless given a dtype) as a tensor of unknown shape, so
    that only the kernel can check it."""
    value = np.asarray(value)
    if value.dtype == np.float64:
        value = value.astype(np.float32)
    return tf.placeholder_with_default(value, shape=None)


@pytest.mark.parametrize(
    "build, error, message",
    [
        (
            lambda h: rv.assign_variable_op(h, _unknown([[1.0, 2.0]]), validate_shape=True),
            tf.errors.InvalidArgumentError,
            "Trying to assign to variable with tensor with wrong shape. Expected [2] got [1,2]",
        ),
        (
            lambda h: rv.assign_add_variable_op(h, _unknown(np.ones(3, np.float32))),
            tf.errors.InvalidArgumentError,
            (
                "Cannot update variable with shape [2] using a Tensor with shape [3], shapes must "
                "be equal."
            ),
        ),
        (
            lambda h: rv.assign_variable_op(h, np.array([1, 2], np.int32)),
            tf.errors.InvalidArgumentError,
            "Trying to assign variable with wrong dtype. Expected float got int32",
        ),
        (
            lambda h: rv.resource_gather(h, [5], tf.float32),
            tf.errors.InvalidArgumentError,
            "indices[0] = 5 is not in [0, 2)",
        ),
        (
            lambda h: rv.resource_gather(h, [[0]], tf.float32, batch_dims=2),
            tf.errors.InvalidArgumentError,
            "must be less than the rank of the variable",
        ),
        (
            lambda h: rv.read_variable_op(
                rv.var_handle_op(tf.float32, [2], shared_name="x"), tf.float32
            ),
            tf.errors.FailedPreconditionError,
            "Could not find variable x.",
        ),
        (
            lambda h: rv.assign_add_variable_op(
                rv.var_handle_op(tf.float32, [2], shared_name="x"), [1.0, 2.0]
            ),
            tf.errors.NotFoundError,
            "localhost/x",
        ),
        (
            lambda h: rv.destroy_resource_op(
                rv.var_handle_op(tf.float32, [2], shared_name="x"), ignore_lookup_error=False
            ),
            tf.errors.NotFoundError,
            "localhost/x",
        ),
    ],
)
def test_kernel_errors_are_tensorflows(build, error, message):
    with pytest.raises(error) as raised:
        _raw_run(build)
    assert message in raised.value.message


def test_reading_a_variable_as_another_dtype_fails_when_built():
    """As in TensorFlow: the read's shape function knows the variable's dtype
    from its handle (VarHandleOp's attrs) and refuses another one."""
    handle = rv.var_handle_op(tf.float32, [2], shared_name="w")
    with pytest.raises(ValueError, match="wrong dtype. Expected float got int32"):
        rv.read_variable_op(tf.identity(handle), tf.int32)
    assert rv.read_variable_op(handle, tf.float32).shape.as_list() == [2]


def test_assign_without_validate_shape_takes_the_new_shape():
    handle = rv.var_handle_op(tf.float32, None, shared_name="w")
    first = rv.assign_variable_op(handle, np.array([1.0, 2.0], np.float32))
    second = rv.assign_variable_op(handle, _unknown(np.ones((2, 2), np.float32)))
    with tf.Session() as sess:
        sess.run(first)
        sess.run(second)
        np.testing.assert_array_equal(
            sess.run(rv.read_variable_op(handle, tf.float32)), np.ones((2, 2))
        )
        np.testing.assert_array_equal(sess.run(rv.variable_shape(handle)), [2, 2])
        assert sess.run(rv.variable_shape(handle, out_type=tf.int64)).dtype == np.int64


def test_an_empty_shared_name_names_one_variable():
    """As TensorFlow's VarHandleOp in a graph: every handle with an empty
    shared_name reaches the same variable (named "")."""
    a = rv.var_handle_op(tf.float32, [2])
    b = rv.var_handle_op(tf.float32, [2])
    with tf.Session() as sess:
        sess.run(rv.assign_variable_op(a, np.array([1.0, 2.0], np.float32)))
        np.testing.assert_array_equal(sess.run(rv.read_variable_op(b, tf.float32)), [1.0, 2.0])


def test_destroy_then_the_variable_is_gone():
    v = tf.Variable([1.0, 2.0], use_resource=True)
    destroy = rv.destroy_resource_op(v.handle)
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(destroy)
        assert not sess.run(v.is_initialized())
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess.run(v)
        sess.run(destroy)  # ignore_lookup_error defaults to true


def test_gather_with_batch_dims_as_tensorflow():
    # Values from TensorFlow 2.21 for a [[1, 2], [3, 4]] variable.
    v = tf.Variable([[1.0, 2.0], [3.0, 4.0]], use_resource=True)
    cases = [
        ({"indices": [[1, 0]]}, [[[3, 4], [1, 2]]]),
        ({"indices": [[1, 0], [0, 0]], "batch_dims": 1}, [[2, 1], [3, 3]]),
        ({"indices": [1, 0], "batch_dims": 1}, [2, 3]),
        ({"indices": [[1], [0]], "batch_dims": -1}, [[2], [3]]),
    ]
    fetches = [rv.resource_gather(v.handle, dtype=tf.float32, **kw) for kw, _ in cases]
    with tf.Session() as sess:
        sess.run(v.initializer)
        for result, (_, expected) in zip(sess.run(fetches), cases):
            np.testing.assert_array_equal(result, expected)


def test_scatter_add_sums_repeated_indices_and_update_broadcasts_a_scalar():
    v = tf.Variable(np.zeros((3, 2), np.int32), use_resource=True)
    add = rv.resource_scatter_add(v.handle, [2, 0, 2], np.ones((3, 2), np.int32))
    with tf.control_dependencies([add]):
        update = rv.resource_scatter_update(v.handle, [1], np.int32(7))
    with tf.control_dependencies([update]):
        after = v.read_value()
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(after), [[1, 1], [7, 7], [2, 2]])
        with pytest.raises(tf.errors.InvalidArgumentError, match="updates.shape"):
            sess.run(rv.resource_scatter_add(v.handle, [0], np.ones((1, 3), np.int32)))


# --- gradients, optimizers, checkpoints --------------------------------------------------


def test_gradients_through_reads_and_gathers():
    v = tf.Variable(np.arange(6, dtype=np.float64).reshape(3, 2), use_resource=True)
    rows = v.sparse_read([2, 0, 2])
    loss = tf.reduce_sum(v * v) + tf.reduce_sum(rows * 3.0)
    (grad,) = tf.gradients(loss, [v])
    value = np.arange(6, dtype=np.float64).reshape(3, 2)
    expected = 2 * value + np.array([[3, 3], [0, 0], [6, 6]])
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_allclose(sess.run(grad), expected)


OPTIMIZERS = {
    "sgd": lambda: tf.train.GradientDescentOptimizer(0.1),
    "momentum": lambda: tf.train.MomentumOptimizer(0.1, 0.9),
    "nesterov": lambda: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
    "adam": lambda: tf.train.AdamOptimizer(0.05),
    "adagrad": lambda: tf.train.AdagradOptimizer(0.1),
    "rmsprop": lambda: tf.train.RMSPropOptimizer(0.01, momentum=0.5),
    "centered_rmsprop": lambda: tf.train.RMSPropOptimizer(0.01, momentum=0.5, centered=True),
}


def _train(make_optimizer, use_resource, steps=5):
    with tf.Graph().as_default():
        x = tf.constant(np.linspace(-1, 1, 12).reshape(4, 3), tf.float32)
        w = tf.get_variable(
            "w",
            initializer=np.linspace(-1, 1, 6).reshape(3, 2).astype(np.float32),
            use_resource=use_resource,
        )
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
        train = make_optimizer().minimize(loss)
        kinds = {op.type for op in tf.get_default_graph().get_operations()}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(steps):
                sess.run(train)
            return sess.run(w), kinds


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizers_update_resource_variables_as_reference_ones(name):
    resource, resource_kinds = _train(OPTIMIZERS[name], True)
    reference, reference_kinds = _train(OPTIMIZERS[name], False)
    assert any(k.startswith("ResourceApply") for k in resource_kinds)
    assert "VariableV2" not in resource_kinds  # slots are resource variables too
    assert not any(k.startswith("ResourceApply") for k in reference_kinds)
    np.testing.assert_array_equal(resource, reference)
    start = np.linspace(-1, 1, 6).reshape(3, 2)
    assert not np.allclose(resource, start)


def test_checkpoints_interchange_between_reference_and_resource_variables(tmp_path):
    value = np.arange(6, dtype=np.float32).reshape(2, 3)
    for save_resource in (True, False):
        prefix = str(tmp_path / f"model_{save_resource}")
        with tf.Graph().as_default():
            v = tf.get_variable("v", initializer=value, use_resource=save_resource)
            with tf.Session() as sess:
                sess.run(v.initializer)
                tf.train.Saver().save(sess, prefix)
        with tf.Graph().as_default():
            v = tf.get_variable("v", [2, 3], use_resource=not save_resource)
            with tf.Session() as sess:
                tf.train.Saver().restore(sess, prefix)
                np.testing.assert_array_equal(sess.run(v), value)


def test_a_variable_on_a_ps_task_trains_from_a_worker_and_outlives_the_session():
    """Reads and updates of a handle run where the variable lives (the
    placer colocates them with the VarHandleOp on the ps)."""
    from loopback_tasks import free_ports

    ps_port, worker_port = free_ports(2)
    cluster = tf.train.ClusterSpec(
        {"ps": [f"localhost:{ps_port}"], "worker": [f"localhost:{worker_port}"]}
    )
    ps = tf.train.Server(cluster, job_name="ps", task_index=0)
    worker = tf.train.Server(cluster, job_name="worker", task_index=0)
    try:
        setter = tf.train.replica_device_setter(cluster=cluster, worker_device="/job:worker/task:0")
        with tf.device(setter):
            w = tf.get_variable(
                "w",
                initializer=np.linspace(-1, 1, 6).reshape(3, 2).astype(np.float32),
                use_resource=True,
            )
            x = tf.constant(np.linspace(-1, 1, 12).reshape(4, 3), tf.float32)
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
            train = tf.train.AdamOptimizer(0.05).minimize(loss)
        assert w.device == "/job:ps/task:0"
        with tf.Session(worker.target) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(5):
                sess.run(train)
        with tf.Session(worker.target) as sess:
            trained = sess.run(w)
    finally:
        worker.stop()
        ps.stop()
    local, _ = _train(OPTIMIZERS["adam"], True)
    np.testing.assert_array_equal(trained, local)


def test_an_imported_meta_graph_restores_resource_variables(tmp_path):
    value = np.arange(3, dtype=np.float32)
    with tf.Graph().as_default():
        v = tf.get_variable("v", initializer=value, use_resource=True)
        with tf.Session() as sess:
            sess.run(v.initializer)
            path = tf.train.Saver().save(sess, str(tmp_path / "model"))
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(path + ".meta")
        with tf.Session() as sess:
            saver.restore(sess, path)
            np.testing.assert_array_equal(sess.run("v/Read/ReadVariableOp:0"), value)


def test_gradient_of_a_variable_read_in_one_branch_of_a_cond():
    """As TensorFlow 2.21 with v1 control flow: 3.0 when the branch reading
    the variable runs, zeros (of the variable's shape) when it does not."""
    v = tf.get_variable("v", initializer=np.float32(2.0), use_resource=True)
    taken = tf.placeholder(tf.bool, [])
    y = tf.cond(taken, lambda: v * 3.0, lambda: tf.constant(1.0))
    (grad,) = tf.gradients(y, [v])
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(grad, {taken: True}) == 3.0
        assert sess.run(grad, {taken: False}) == 0.0


def test_the_train_op_with_a_resource_global_step_is_its_increment():
    tf.enable_resource_variables()
    w = tf.Variable([0.0], name="w")
    step = tf.train.get_or_create_global_step()
    assert isinstance(step, rv.ResourceVariable)
    train = tf.train.AdamOptimizer(0.1).apply_gradients([(tf.constant([1.0]), w)], global_step=step)
    assert isinstance(train, tf.Operation)
    assert train.type == "AssignAddVariableOp" and train.name == "Adam"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(train) is None
        assert sess.run(train) is None
        assert sess.run(step) == 2


def test_concurrent_updates_of_one_variable_all_land():
    """Independent updates of one variable run in parallel (inter-op
    threads) under its lock: none is lost, and reads never see a torn value."""
    v = tf.Variable(np.zeros(1000, np.float32), use_resource=True)
    delta = np.ones(1000, np.float32)
    adds = [v.assign_add(delta, read_value=False) for _ in range(32)]
    subs = [v.assign_sub(delta * 0.5, read_value=False) for _ in range(16)]
    reads = [v.value() for _ in range(16)]
    config = tf.ConfigProto(inter_op_parallelism_threads=4)
    with tf.Session(config=config) as sess:
        sess.run(v.initializer)
        for _ in range(5):
            for value in sess.run([tf.group(*adds, *subs)] + reads)[1:]:
                assert np.all(value == value[0])  # one whole value each
        np.testing.assert_array_equal(sess.run(v), np.full(1000, 5 * (32 - 8), np.float32))


def test_disable_copy_on_read_from_tensorflow_savers_runs_on_an_existing_variable():
    # TensorFlow 2.x's savers put DisableCopyOnRead before each read of a
    # variable they save; meta graphs holding it must import and run.
    v = tf.get_variable("v", initializer=[1.0, 2.0], use_resource=True)
    disable = tf.get_default_graph().create_op("DisableCopyOnRead", [v.handle], [], name="disable")
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(disable)
        np.testing.assert_array_equal(sess.run(v.read_value()), [1.0, 2.0])
    missing = rv.var_handle_op(dtype=tf.float32, shape=[], shared_name="never_created")
    fails = tf.get_default_graph().create_op("DisableCopyOnRead", [missing], [], name="fails")
    # TensorFlow 2.21 answers FailedPrecondition here too (its variable lookup's error).
    with tf.Session() as sess, pytest.raises(tf.errors.FailedPreconditionError):
        sess.run(fails)
