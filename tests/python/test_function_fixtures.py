"""GraphDefs with function libraries recorded from real TensorFlow 2.x
(tests/fixtures/tf_functions, written by tests/fixtures/record_functions.py):
tf.function graphs with PartitionedCall / StatefulPartitionedCall, If /
StatelessIf, Case / StatelessCase and While / StatelessWhile, and a frozen
model. Each imports with tf.import_graph_def, keeps its library through
as_graph_def, and reproduces every recorded case; hostile edits of them fail
with INVALID_ARGUMENT and never crash.

NAME.pb is a binary GraphDef; NAME.npz holds, for each case k,
feed<k>__<tensor> inputs and fetch<k>__<tensor> expected outputs.
"""

import os
import threading
import time

import numpy as np
import pytest
import tensorweave as tf
from loopback_tasks import free_ports
from recorded_graphs import (
    assert_fixtures_present,
    assert_reproduces,
    fixture_graphs,
    fixture_name,
    graph_ops,
    imported,
    load_cases,
    load_graph_def,
)

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_functions")

GRAPHS = fixture_graphs(FIXTURES)
EXPECTED = {
    "cond",
    "cond_call",
    "while",
    "while_call",
    "nested_while",
    "switch_case",
    "nested_call",
    "raw_functional",
    "small_model",
}


def _graph_def(name):
    return load_graph_def(os.path.join(FIXTURES, name + ".pb"))


def _assert_reproduces(sess, path):
    assert_reproduces(sess, path, rtol=1e-5, atol=1e-6)


def test_every_function_fixture_is_present_and_covers_the_call_ops():
    assert_fixtures_present(GRAPHS, EXPECTED)
    ops = set()
    for name in EXPECTED:
        ops |= graph_ops(_graph_def(name))
    wanted = {"PartitionedCall", "StatefulPartitionedCall", "If", "StatelessIf", "Case"}
    wanted |= {"StatelessCase", "While", "StatelessWhile"}
    assert wanted <= ops, f"no fixture holds {wanted - ops}"


@pytest.mark.parametrize("path", GRAPHS, ids=fixture_name)
def test_fixture_reproduces_every_recorded_case(path):
    graph_def = load_graph_def(path)
    assert len(graph_def.library.function) > 0
    with tf.Session(graph=imported(graph_def)) as sess:
        _assert_reproduces(sess, path)


def test_as_graph_def_writes_the_library_back():
    graph_def = _graph_def("nested_while")
    written = imported(graph_def).as_graph_def()
    original = {f.signature.name: f for f in graph_def.library.function}
    assert {f.signature.name: f for f in written.library.function} == original
    # And what it wrote imports and runs again.
    with tf.Session(graph=imported(written)) as sess:
        _assert_reproduces(sess, os.path.join(FIXTURES, "nested_while.pb"))


def test_importing_the_same_library_twice_keeps_one_copy():
    graph_def = _graph_def("cond")
    graph = tf.Graph()
    with graph.as_default():
        tf.import_graph_def(graph_def, name="first")
        tf.import_graph_def(graph_def, name="second")
    written = graph.as_graph_def()
    assert len(written.library.function) == len(graph_def.library.function)
    with tf.Session(graph=graph) as sess:
        x = np.array([1.0, 2.0, 3.0], np.float32)
        first, second = sess.run(
            ["first/Identity:0", "second/Identity:0"],
            feed_dict={"first/x:0": x, "first/p:0": True, "second/x:0": x, "second/p:0": False},
        )
    np.testing.assert_array_equal(first, x * 2.0)
    np.testing.assert_array_equal(second, x - 1.0)


def _body(graph_def, name_part):
    """The one library function whose name contains `name_part`."""
    found = [f for f in graph_def.library.function if name_part in f.signature.name]
    assert len(found) == 1, [f.signature.name for f in graph_def.library.function]
    return found[0]


def _assert_import_rejected(graph_def, match):
    graph = tf.Graph()
    # tf.import_graph_def raises INVALID_ARGUMENT as ValueError, as TensorFlow does.
    with graph.as_default(), pytest.raises(ValueError, match=match):
        tf.import_graph_def(graph_def, name="")
    assert graph.get_operations() == []


def _hostile_missing_function():
    graph_def = _graph_def("cond")
    for node in graph_def.node:
        if node.op == "StatelessIf":
            node.attr["then_branch"].func.name = "no_such_function"
    return graph_def


def _hostile_body_cycle():
    graph_def = _graph_def("cond")
    function = graph_def.library.function[0]
    first = function.node_def[0]
    second = function.node_def.add()
    second.CopyFrom(first)
    second.name = first.name + "_again"
    first.input.append("^" + second.name)
    second.input.append("^" + first.name)
    return graph_def


def _hostile_recursion():
    graph_def = _graph_def("nested_call")
    inner = _body(graph_def, "inner")
    middle = _body(graph_def, "middle")
    for node in inner.node_def:
        if node.op in ("PartitionedCall", "StatefulPartitionedCall"):
            break
    else:
        node = inner.node_def.add()
        node.name = "back_to_middle"
        node.op = "PartitionedCall"
        node.input.append(inner.signature.input_arg[0].name)
        node.attr["Tin"].list.type.append(inner.signature.input_arg[0].type)
        node.attr["Tout"].list.type.append(middle.signature.output_arg[0].type)
    node.attr["f"].func.name = middle.signature.name
    return graph_def


def _hostile_deep_chain(depth=5000):
    """f0 calls f1 calls ... f<depth>: far deeper than any real library."""
    graph_def = tf.GraphDef()
    for k in range(depth):
        function = graph_def.library.function.add()
        function.signature.name = f"chain_{k}"
        arg = function.signature.input_arg.add()
        arg.name, arg.type = "x", tf.float32.as_datatype_enum
        out = function.signature.output_arg.add()
        out.name, out.type = "y", tf.float32.as_datatype_enum
        call = function.node_def.add()
        call.name = "call"
        if k + 1 < depth:
            call.op = f"chain_{k + 1}"
            function.ret["y"] = "call:y:0"
        else:
            call.op = "Identity"
            call.attr["T"].type = tf.float32.as_datatype_enum
            function.ret["y"] = "call:output:0"
        call.input.append("x")
    return graph_def


@pytest.mark.parametrize(
    "build, match",
    [
        (_hostile_missing_function, "no_such_function"),
        (_hostile_body_cycle, "cycle"),
        (_hostile_recursion, "calls itself"),
        (_hostile_deep_chain, "nests calls"),
    ],
    ids=["missing_function", "body_cycle", "recursion", "deep_chain"],
)
def test_hostile_library_is_rejected_at_import(build, match):
    _assert_import_rejected(build(), match)


def test_mismatched_tout_is_invalid_argument_naming_the_caller():
    graph_def = _graph_def("cond")
    for node in graph_def.node:
        if node.op == "StatelessIf":
            # The branches return a float; the node now says int32.
            node.attr["Tout"].list.type[0] = tf.int32.as_datatype_enum
            caller = node.name
        if node.op == "Identity":
            node.attr["T"].type = tf.int32.as_datatype_enum
    with (
        tf.Session(graph=imported(graph_def)) as sess,
        pytest.raises(tf.errors.InvalidArgumentError, match=caller),
    ):
        sess.run("Identity:0", feed_dict={"x:0": np.ones(3, np.float32), "p:0": True})


def test_mismatched_tin_is_invalid_argument_naming_the_caller():
    graph_def = _graph_def("cond")
    for node in graph_def.node:
        if node.op == "StatelessIf":
            caller = node.name
            # The branch takes one float; the call now passes two.
            node.input.append(node.input[1])
            node.attr["Tin"].list.type.append(node.attr["Tin"].list.type[0])
    with (
        tf.Session(graph=imported(graph_def)) as sess,
        pytest.raises(tf.errors.InvalidArgumentError, match=caller),
    ):
        sess.run("Identity:0", feed_dict={"x:0": np.ones(3, np.float32), "p:0": True})


def _endless_while():
    """The recorded counter loop with n beyond reach: it runs until stopped."""
    return imported(_graph_def("while")), {"n:0": np.array(2**31 - 1, np.int32)}


def test_run_options_timeout_ends_an_endless_while():
    graph, feeds = _endless_while()
    with tf.Session(graph=graph) as sess:
        start = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run("Identity:0", feed_dict=feeds, options=tf.RunOptions(timeout_in_ms=200))
        assert time.monotonic() - start < 5
        assert sess.run("Identity:0", feed_dict={"n:0": 3}) == 3


def test_close_from_another_thread_ends_an_endless_while():
    graph, feeds = _endless_while()
    sess = tf.Session(graph=graph)
    outcome = []

    def run():
        try:
            sess.run("Identity:0", feed_dict=feeds)
            outcome.append("finished")
        except tf.errors.CancelledError as error:
            outcome.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    time.sleep(0.3)
    assert thread.is_alive()
    sess.close()
    thread.join(10)
    assert not thread.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], tf.errors.CancelledError)


def test_nested_calls_run_on_one_inter_op_thread():
    """Call kernels never wait on a thread, so one inter-op thread suffices."""
    config = tf.ConfigProto(inter_op_parallelism_threads=1, intra_op_parallelism_threads=1)
    for name in ("nested_while", "while_call", "nested_call", "small_model"):
        with tf.Session(graph=imported(_graph_def(name)), config=config) as sess:
            _assert_reproduces(sess, os.path.join(FIXTURES, name + ".pb"))


def test_concurrent_runs_share_the_instantiations():
    path = os.path.join(FIXTURES, "raw_functional.pb")
    cases = load_cases(path)
    errors = []
    with tf.Session(graph=imported(_graph_def("raw_functional"))) as sess:

        def run():
            try:
                for _ in range(5):
                    for feeds, fetches in cases:
                        results = sess.run(list(fetches), feed_dict=feeds)
                        for result, expected in zip(results, fetches.values()):
                            np.testing.assert_allclose(result, expected, rtol=1e-5)
            except Exception as error:  # noqa: BLE001 - reported below
                errors.append(error)

        threads = [threading.Thread(target=run) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    assert not errors, errors


def test_remote_sessions_run_every_fixture():
    # The master sends the session's library with each worker's partition.
    server = tf.train.Server.create_local_server()
    try:
        for path in GRAPHS:
            with open(path, "rb") as f:
                graph_def = tf.GraphDef.FromString(f.read())
            with tf.Session(server.target, graph=imported(graph_def)) as sess:
                _assert_reproduces(sess, path)
    finally:
        server.stop()


def test_function_calls_placed_on_another_task_run_there():
    ports = free_ports(2)
    cluster = tf.train.ClusterSpec({"worker": [f"localhost:{port}" for port in ports]})
    servers = [tf.train.Server(cluster, job_name="worker", task_index=i) for i in range(2)]
    try:
        for path in GRAPHS:
            with open(path, "rb") as f:
                graph_def = tf.GraphDef.FromString(f.read())
            functions = {f.signature.name for f in graph_def.library.function}
            for node in graph_def.node:  # calls on task 1, everything else on task 0
                calls = node.op in _FUNCTIONAL_OPS or node.op in functions
                node.device = "/job:worker/task:1" if calls else "/job:worker/task:0"
            with tf.Session(servers[0].target, graph=imported(graph_def)) as sess:
                _assert_reproduces(sess, path)
    finally:
        for server in servers:
            server.stop()


_FUNCTIONAL_OPS = {
    "PartitionedCall",
    "StatefulPartitionedCall",
    "If",
    "StatelessIf",
    "Case",
    "StatelessCase",
    "While",
    "StatelessWhile",
}
