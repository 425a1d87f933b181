"""GraphDefs with TensorFlow 1.x control flow recorded from real TensorFlow
(tests/fixtures/tf_control_flow, written by tests/fixtures/record_control_flow.py)
import with tf.import_graph_def and reproduce every recorded case.

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
    imported,
    load_graph_def,
)

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_control_flow")

GRAPHS = fixture_graphs(FIXTURES)
EXPECTED = {
    "cond",
    "nested_cond",
    "while_counter",
    "nested_while",
    "while_tensor",
    "cond_with_while",
}


def _path(name):
    return os.path.join(FIXTURES, name + ".pb")


def _graph_def(name):
    return load_graph_def(_path(name))


def _assert_reproduces(sess, name):
    """`sess` (on the fixture's graph) gives every recorded case exactly."""
    assert_reproduces(sess, _path(name))


def test_every_control_flow_fixture_is_present():
    assert_fixtures_present(GRAPHS, EXPECTED)


@pytest.mark.parametrize("path", GRAPHS, ids=fixture_name)
def test_fixture_reproduces_every_recorded_case(path):
    with tf.Session(graph=imported(load_graph_def(path))) as sess:
        assert_reproduces(sess, path, rtol=1e-6, atol=1e-6)


def test_loop_runs_the_same_with_one_iteration_at_a_time():
    """parallel_iterations=1 (edited into every Enter) gives the recorded results."""
    graph_def = _graph_def("nested_while")
    enters = [node for node in graph_def.node if node.op == "Enter"]
    assert enters
    for node in enters:
        node.attr["parallel_iterations"].i = 1
    with tf.Session(graph=imported(graph_def)) as sess:
        _assert_reproduces(sess, "nested_while")


def test_fetching_the_untaken_branch_is_invalid_argument():
    graph = imported(_graph_def("cond"))
    true_branch = graph.get_tensor_by_name("cond/mul:0")  # x * 2, taken when p
    with tf.Session(graph=graph) as sess:
        feeds = {"x:0": np.ones(3, np.float32), "p:0": False}
        with pytest.raises(
            tf.errors.InvalidArgumentError, match=r"Retval\[0\] does not have value"
        ):
            sess.run(true_branch, feed_dict=feeds)
        # The step itself is fine: the same session runs the other branch.
        np.testing.assert_array_equal(sess.run("y:0", feed_dict=feeds), np.zeros(3, np.float32))


def _endless_counter():
    """The recorded counter loop (i < n) with n beyond reach: it runs until stopped."""
    return imported(_graph_def("while_counter")), {"n:0": np.array(2**31 - 1, np.int32)}


def test_run_options_timeout_ends_an_endless_loop():
    graph, feeds = _endless_counter()
    with tf.Session(graph=graph) as sess:
        start = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run("count:0", feed_dict=feeds, options=tf.RunOptions(timeout_in_ms=200))
        assert time.monotonic() - start < 5
        assert sess.run("count:0", feed_dict={"n:0": 3}) == 3  # the session still works


def test_close_from_another_thread_ends_an_endless_loop():
    graph, feeds = _endless_counter()
    sess = tf.Session(graph=graph)
    outcome = []

    def run():
        try:
            sess.run("count:0", feed_dict=feeds)
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


_CONTROL_FLOW_OPS = ("Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond")


def _placed(graph_def, is_inside, inside_device, other_device):
    """A copy of `graph_def` with the nodes `is_inside` picks on
    `inside_device` and the others on `other_device`."""
    moved = graph_def.__class__()
    moved.CopyFrom(graph_def)
    for node in moved.node:
        node.device = inside_device if is_inside(node) else other_device
    return moved


def _in_cond_branch(node):
    """Ops inside a cond branch (not the Switches and Merges themselves):
    on another device, dead tensors of the untaken branch cross both ways."""
    return "/" in node.name and node.op not in ("Switch", "Merge")


def _in_loop_body(node):
    """The computation inside a loop (not its Enter/Merge/Switch/LoopCond/
    NextIteration/Exit): on another device, values cross every iteration."""
    return "while" in node.name and node.op not in _CONTROL_FLOW_OPS


COND_FIXTURES = ("cond", "nested_cond")
LOOP_FIXTURES = ("while_counter", "nested_while", "while_tensor", "cond_with_while")


@pytest.fixture
def two_workers():
    """Two in-process tasks of job "worker"."""
    ports = free_ports(2)
    cluster = tf.train.ClusterSpec({"worker": [f"localhost:{port}" for port in ports]})
    config = tf.ConfigProto(device_count={"CPU": 2})
    servers = [
        tf.train.Server(cluster, job_name="worker", task_index=i, config=config) for i in range(2)
    ]
    yield servers
    for server in servers:
        server.stop()


@pytest.mark.parametrize(
    "names, is_inside", [(COND_FIXTURES, _in_cond_branch), (LOOP_FIXTURES, _in_loop_body)]
)
def test_conds_and_loops_split_over_two_devices_run(names, is_inside):
    config = tf.ConfigProto(device_count={"CPU": 2})
    for name in names:
        graph_def = _placed(_graph_def(name), is_inside, "/device:CPU:1", "/device:CPU:0")
        with tf.Session(graph=imported(graph_def), config=config) as sess:
            _assert_reproduces(sess, name)
            _assert_reproduces(sess, name)  # every step starts afresh


@pytest.mark.parametrize(
    "names, is_inside", [(COND_FIXTURES, _in_cond_branch), (LOOP_FIXTURES, _in_loop_body)]
)
def test_conds_and_loops_split_over_two_tasks_run(two_workers, names, is_inside):
    for name in names:
        graph_def = _placed(_graph_def(name), is_inside, "/job:worker/task:1", "/job:worker/task:0")
        with tf.Session(two_workers[0].target, graph=imported(graph_def)) as sess:
            _assert_reproduces(sess, name)


def test_a_dead_fetch_made_on_another_task_is_invalid_argument(two_workers):
    graph_def = _placed(_graph_def("cond"), _in_cond_branch, "/job:worker/task:1", "")
    with tf.Session(two_workers[0].target, graph=imported(graph_def)) as sess:
        feeds = {"x:0": np.ones(3, np.float32), "p:0": False}
        with pytest.raises(tf.errors.InvalidArgumentError, match="does not have value"):
            sess.run("cond/mul:0", feed_dict=feeds)


def test_a_loop_spread_over_two_tasks_and_two_devices_each_runs(two_workers):
    """The master cuts between tasks, each worker again between its devices:
    both levels add the control loops that drive their receivers."""
    devices = [f"/job:worker/task:{t}/device:CPU:{d}" for t in range(2) for d in range(2)]
    graph_def = _graph_def("nested_while")
    computation = [node for node in graph_def.node if node.op not in _CONTROL_FLOW_OPS]
    for k, node in enumerate(computation):
        node.device = devices[k % len(devices)]  # spread round the four devices
    config = tf.ConfigProto(device_count={"CPU": 2})
    with tf.Session(two_workers[0].target, graph=imported(graph_def), config=config) as sess:
        _assert_reproduces(sess, "nested_while")


def test_remote_session_runs_loops_and_reports_dead_fetches():
    server = tf.train.Server.create_local_server()
    try:
        with tf.Session(server.target, graph=imported(_graph_def("nested_while"))) as sess:
            _assert_reproduces(sess, "nested_while")
            with pytest.raises(tf.errors.UnimplementedError, match="inside the while loop"):
                sess.run("while/while/NextIteration:0", feed_dict={"n:0": 0})

        with tf.Session(server.target, graph=imported(_graph_def("cond"))) as sess:
            feeds = {"x:0": np.ones(3, np.float32), "p:0": False}
            np.testing.assert_array_equal(sess.run("y:0", feed_dict=feeds), np.zeros(3, np.float32))
            with pytest.raises(tf.errors.InvalidArgumentError, match="does not have value"):
                sess.run("cond/mul:0", feed_dict=feeds)
    finally:
        server.stop()
