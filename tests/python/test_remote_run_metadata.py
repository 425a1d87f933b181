"""RunOptions/RunMetadata through a remote session: a two-task cluster of
in-process servers on loopback, a graph spread over both tasks. A traced
run reports the step stats of both tasks' devices (every node once) and,
when asked, the partition graph of each task; an untraced run reports
nothing. With and without RPC to the in-process master."""

import json

import numpy as np
import pytest
import tensorweave as tf
from loopback_tasks import free_ports
from tensorweave.client import timeline

TASK0 = "/job:worker/replica:0/task:0/device:CPU:0"
TASK1 = "/job:worker/replica:0/task:1/device:CPU:0"
FULL_TRACE = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)


@pytest.fixture
def cluster():
    """Two worker tasks on loopback; yields task 0's target, stops both."""
    cluster = tf.train.ClusterSpec({"worker": [f"localhost:{p}" for p in free_ports(2)]})
    servers = [tf.train.Server(cluster, job_name="worker", task_index=i) for i in range(2)]
    yield servers[0].target
    for server in servers:
        server.stop()


def two_task_graph():
    graph = tf.Graph()
    with graph.as_default():
        with tf.device("/job:worker/task:0"):
            x = tf.placeholder(tf.float32, [2, 3], name="x")
            a = tf.multiply(x, 2.0, name="a")
        with tf.device("/job:worker/task:1"):
            b = tf.matmul(a, tf.ones([3, 4], name="w"), name="b")
        with tf.device("/job:worker/task:0"):
            z = tf.reduce_sum(b, name="z")
    return graph, x, z


def open_session(target, graph, use_rpc):
    config = tf.ConfigProto(operation_timeout_in_ms=30000)
    config.rpc_options.use_rpc_for_inprocess_master = use_rpc
    return tf.Session(target, graph=graph, config=config)


def devices_of(metadata):
    """node name → the devices that recorded it."""
    found = {}
    for device in metadata.step_stats.dev_stats:
        for node in device.node_stats:
            found.setdefault(node.node_name, []).append(device.device)
    return found


@pytest.mark.parametrize("use_rpc", [False, True], ids=["local_master", "rpc_master"])
def test_full_trace_reports_both_tasks_each_node_once(cluster, use_rpc):
    graph, x, z = two_task_graph()
    metadata = tf.RunMetadata()
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE, output_partition_graphs=True)
    with open_session(cluster, graph, use_rpc) as sess:
        value = sess.run(z, {x: np.ones((2, 3))}, options=options, run_metadata=metadata)
    assert value == 48.0
    assert {d.device for d in metadata.step_stats.dev_stats} == {TASK0, TASK1}
    recorded = devices_of(metadata)
    assert all(len(devices) == 1 for devices in recorded.values()), recorded
    assert recorded["a"] == [TASK0]
    assert recorded["w"] == [TASK1]
    assert recorded["b"] == [TASK1]
    assert recorded["z"] == [TASK0]
    # The tensors crossing between the tasks are recorded on both sides.
    ops = {
        n.timeline_label.split(" = ")[1].split("(")[0]
        for d in metadata.step_stats.dev_stats
        for n in d.node_stats
    }
    assert {"_Send", "_Recv"} <= ops
    for device in metadata.step_stats.dev_stats:
        for node in device.node_stats:
            assert node.all_start_micros > 0
            assert node.all_end_rel_micros >= 0
    (b_output,) = next(
        n for d in metadata.step_stats.dev_stats for n in d.node_stats if n.node_name == "b"
    ).output
    assert [d.size for d in b_output.tensor_description.shape.dim] == [2, 4]

    assert len(metadata.partition_graphs) == 2
    placed = {}
    for partition in metadata.partition_graphs:
        (device,) = {node.device for node in partition.node}
        placed[device] = {node.name for node in partition.node}
    assert {"a", "z"} <= placed[TASK0] and not {"b", "w"} & placed[TASK0]
    assert {"b", "w"} <= placed[TASK1] and not {"a", "z"} & placed[TASK1]


@pytest.mark.parametrize("use_rpc", [False, True], ids=["local_master", "rpc_master"])
def test_untraced_runs_report_nothing(cluster, use_rpc):
    graph, x, z = two_task_graph()
    metadata = tf.RunMetadata()
    feed = {x: np.ones((2, 3))}
    with open_session(cluster, graph, use_rpc) as sess:
        sess.run(z, feed, options=FULL_TRACE, run_metadata=metadata)
        assert metadata.HasField("step_stats")
        assert not metadata.partition_graphs  # not asked for
        assert sess.run(z, feed, options=tf.RunOptions(), run_metadata=metadata) == 48.0
        assert metadata == tf.RunMetadata()
        sess.run(z, feed, options=FULL_TRACE, run_metadata=metadata)
        assert sess.run(z, feed, run_metadata=metadata) == 48.0
        assert metadata == tf.RunMetadata()
        # Partition graphs without tracing: graphs, no stats.
        only_graphs = tf.RunOptions(output_partition_graphs=True)
        sess.run(z, feed, options=only_graphs, run_metadata=metadata)
        assert not metadata.HasField("step_stats")
        assert len(metadata.partition_graphs) == 2


def test_a_traced_step_is_not_appended_to_the_last_one(cluster):
    graph, x, z = two_task_graph()
    metadata = tf.RunMetadata()
    with open_session(cluster, graph, use_rpc=False) as sess:
        sess.run(z, {x: np.ones((2, 3))}, options=FULL_TRACE, run_metadata=metadata)
        first = sorted(devices_of(metadata))
        sess.run(z, {x: np.ones((2, 3))}, options=FULL_TRACE, run_metadata=metadata)
        assert sorted(devices_of(metadata)) == first
        assert len(metadata.step_stats.dev_stats) == 2


def test_callable_with_options_reports_both_tasks(cluster):
    graph, x, z = two_task_graph()
    with open_session(cluster, graph, use_rpc=True) as sess:
        step = sess.make_callable(z, [x], accept_options=True)
        metadata = tf.RunMetadata()
        assert step(np.ones((2, 3)), options=FULL_TRACE, run_metadata=metadata) == 48.0
        assert {d.device for d in metadata.step_stats.dev_stats} == {TASK0, TASK1}
        assert step(np.ones((2, 3))) == 48.0


def test_timeline_of_a_remote_step_shows_both_tasks(cluster):
    graph, x, z = two_task_graph()
    metadata = tf.RunMetadata()
    with open_session(cluster, graph, use_rpc=False) as sess:
        sess.run(z, {x: np.ones((2, 3))}, options=FULL_TRACE, run_metadata=metadata)
    trace = json.loads(timeline.Timeline(metadata.step_stats).generate_chrome_trace_format())
    processes = {
        e["args"]["name"]
        for e in trace["traceEvents"]
        if e["ph"] == "M" and e["name"] == "process_name"
    }
    assert any(TASK0 in name for name in processes), processes
    assert any(TASK1 in name for name in processes), processes
    ran = {e["args"]["name"] for e in trace["traceEvents"] if e["ph"] == "X"}
    assert {"a", "b", "w", "z"} <= ran
