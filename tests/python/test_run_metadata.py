"""Session.run(options=tf.RunOptions(trace_level=...), run_metadata=...):
step stats per node and partition graphs, through Session.run and
make_callable, and the Chrome trace tensorweave.client.timeline makes of
them."""

import json

import numpy as np
import pytest
import tensorweave as tf
from tensorweave.client import timeline

CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"
FULL_TRACE = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)


def small_graph():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [2, 3], name="x")
        y = tf.matmul(x, tf.ones([3, 4], name="w"), name="y")
        z = tf.reduce_sum(y, name="z")
    return graph, x, y, z


def node_stats(metadata):
    return {n.node_name: (d.device, n) for d in metadata.step_stats.dev_stats for n in d.node_stats}


def test_full_trace_records_each_node_once_with_its_outputs():
    graph, x, _, z = small_graph()
    metadata = tf.RunMetadata()
    with tf.Session(graph=graph) as sess:
        value = sess.run(z, {x: np.ones((2, 3))}, options=FULL_TRACE, run_metadata=metadata)
    assert value == 24.0
    (device,) = metadata.step_stats.dev_stats
    names = [n.node_name for n in device.node_stats]
    assert len(names) == len(set(names))
    assert {"w", "y", "z"} <= set(names)
    for node in device.node_stats:
        assert node.all_start_micros > 0
        assert 0 <= node.op_start_rel_micros <= node.op_end_rel_micros <= node.all_end_rel_micros
        assert node.all_start_nanos // 1000 == node.all_start_micros
    stats = node_stats(metadata)
    (out,) = stats["y"][1].output
    assert out.tensor_description.dtype == tf.float32.as_datatype_enum
    assert [d.size for d in out.tensor_description.shape.dim] == [2, 4]
    assert out.tensor_description.allocation_description.allocated_bytes == 2 * 4 * 4
    (out,) = stats["z"][1].output
    assert list(out.tensor_description.shape.dim) == []
    assert stats["y"][1].timeline_label.startswith("y = MatMul(")


def test_run_metadata_is_replaced_and_untraced_runs_record_nothing():
    graph, x, _, z = small_graph()
    metadata = tf.RunMetadata()
    with tf.Session(graph=graph) as sess:
        feed = {x: np.ones((2, 3))}
        sess.run(z, feed, options=FULL_TRACE, run_metadata=metadata)
        first = len(metadata.step_stats.dev_stats[0].node_stats)
        sess.run(z, feed, options=FULL_TRACE, run_metadata=metadata)
        assert len(metadata.step_stats.dev_stats[0].node_stats) == first  # not appended
        sess.run(z, feed, run_metadata=metadata)
        assert not metadata.HasField("step_stats")
        sess.run(z, feed, options=tf.RunOptions(), run_metadata=metadata)
        assert not metadata.HasField("step_stats")
        # Options without metadata: the run is traced for nobody, and works.
        assert sess.run(z, feed, options=FULL_TRACE) == 24.0


def test_output_partition_graphs_one_per_device():
    graph = tf.Graph()
    with graph.as_default():
        with tf.device("/cpu:0"):
            a = tf.constant([1.0, 2.0], name="a")
        with tf.device("/cpu:1"):
            b = tf.multiply(a, 3.0, name="b")
        with tf.device("/cpu:0"):
            c = tf.add(b, 1.0, name="c")
    # The graph optimizer would fold this all-constant graph into one Const;
    # off, every node runs where it was put.
    config = tf.ConfigProto(
        device_count={"CPU": 2},
        graph_options=tf.GraphOptions(
            optimizer_options=tf.OptimizerOptions(opt_level=tf.OptimizerOptions.L0)
        ),
    )
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE, output_partition_graphs=True)
    metadata = tf.RunMetadata()
    with tf.Session(graph=graph, config=config) as sess:
        np.testing.assert_array_equal(
            sess.run(c, options=options, run_metadata=metadata), [4.0, 7.0]
        )
    assert len(metadata.partition_graphs) == 2
    devices = {n.device for g in metadata.partition_graphs for n in g.node}
    assert devices == {CPU0, CPU1}
    assert {d.device for d in metadata.step_stats.dev_stats} == {CPU0, CPU1}
    stats = node_stats(metadata)
    assert stats["a"][0] == CPU0 and stats["b"][0] == CPU1 and stats["c"][0] == CPU0

    trace = json.loads(timeline.Timeline(metadata.step_stats).generate_chrome_trace_format())
    events = trace["traceEvents"]
    processes = {e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert processes == {f"{CPU0} Compute", f"{CPU1} Compute"}
    ops = [e for e in events if e["ph"] == "X"]
    assert sorted(e["args"]["name"] for e in ops) == sorted(stats)
    by_name = {e["args"]["name"]: e for e in ops}
    assert by_name["b"]["name"] == "Mul" and by_name["b"]["args"]["op"] == "Mul"
    # Tensors crossing devices are drawn as flows: start at the producer,
    # end at the consumer, paired by id.
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = {e["id"]: e for e in events if e["ph"] == "t"}
    assert starts and starts.keys() == ends.keys()
    for flow_id, start in starts.items():
        assert start["pid"] != ends[flow_id]["pid"] or start["tid"] != ends[flow_id]["tid"]
        assert start["ts"] <= ends[flow_id]["ts"]
    no_flows = json.loads(
        timeline.Timeline(metadata.step_stats).generate_chrome_trace_format(show_dataflow=False)
    )
    assert not [e for e in no_flows["traceEvents"] if e["ph"] in "st"]


def test_timeline_names_every_node_and_shows_memory():
    graph, x, _, z = small_graph()
    metadata = tf.RunMetadata()
    with tf.Session(graph=graph) as sess:
        sess.run(z, {x: np.ones((2, 3))}, options=FULL_TRACE, run_metadata=metadata)
    chrome = timeline.Timeline(metadata.step_stats, graph=graph).generate_chrome_trace_format(
        show_memory=True
    )
    events = json.loads(chrome)["traceEvents"]
    ops = [e for e in events if e["ph"] == "X"]
    assert sorted(e["args"]["name"] for e in ops) == sorted(node_stats(metadata))
    for event in ops:
        assert event["dur"] >= 0 and event["ts"] > 0 and event["cat"] == "Op"
    created = {e["name"]: e for e in events if e["ph"] == "N"}
    deleted = {e["name"]: e for e in events if e["ph"] == "D"}
    assert "y:0" in created and created.keys() == deleted.keys()
    assert created["y:0"]["ts"] <= deleted["y:0"]["ts"]
    snapshot = next(e for e in events if e["ph"] == "O" and e["name"] == "y:0")
    assert snapshot["args"]["snapshot"]["bytes"] == 32


def test_make_callable_with_accept_options_fills_run_metadata():
    graph, x, _, z = small_graph()
    with tf.Session(graph=graph) as sess:
        step = sess.make_callable(z, [x], accept_options=True)
        metadata = tf.RunMetadata()
        assert step(np.ones((2, 3)), options=FULL_TRACE, run_metadata=metadata) == 24.0
        assert "z" in node_stats(metadata)
        with pytest.raises(TypeError):
            sess.make_callable(z, [x])(np.ones((2, 3)), run_metadata=metadata)


def test_run_metadata_when_nothing_runs():
    graph, *_ = small_graph()
    metadata = tf.RunMetadata()
    metadata.partition_graphs.add()
    with tf.Session(graph=graph) as sess:
        assert sess.run([], options=FULL_TRACE, run_metadata=metadata) == []
    assert metadata == tf.RunMetadata()
