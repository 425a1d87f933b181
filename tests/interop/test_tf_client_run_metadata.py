"""RunOptions/RunMetadata across the two implementations: TensorFlow's own
client asks a tensorweave server for a FULL_TRACE run's step stats and
partition graphs, and a tensorweave client asks a TensorFlow server for
them. Servers and TensorFlow's client run as subprocesses killed by pid;
every run has a timeout."""

import json
import os

import numpy as np
import tensorweave as tf
from conftest import HERE, STARTUP_SECONDS

LOCAL_CPU = "/job:localhost/replica:0/task:0/device:CPU:0"


def test_tf_client_gets_run_metadata_from_a_tensorweave_server(tf_python, processes, tw_server):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")
    client = processes([tf_python, str(HERE / "tf_client_run_metadata.py"), tw_server], env=env)
    result = json.loads(client.read_line(STARTUP_SECONDS))
    assert "error" not in result, result["error"]
    assert result["y"] == [[1.0, 3.0, 5.0, 7.0]]
    assert result["devices"] == [LOCAL_CPU]
    nodes = result["nodes"]
    assert len(nodes) == len(set(nodes))
    assert {"mul", "y"} <= set(nodes)
    assert all(start > 0 for start in result["all_start_micros"])
    (graph_nodes,) = result["partition_graph_nodes"]
    assert {"mul", "y"} <= set(graph_nodes)
    assert result["untraced_has_step_stats"] is False
    assert result["untraced_partition_graphs"] == 0


def test_tensorweave_client_gets_run_metadata_from_a_tensorflow_server(tf_server):
    x = tf.placeholder(tf.float32, [1, 4], name="x")
    y = tf.add(x * 2.0, 1.0, name="y")
    feed = {x: np.arange(4, dtype=np.float32).reshape(1, 4)}
    metadata = tf.RunMetadata()
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE, output_partition_graphs=True)
    config = tf.ConfigProto(operation_timeout_in_ms=30000)
    with tf.Session(tf_server, config=config) as sess:
        value = sess.run(y, feed, options=options, run_metadata=metadata)
        np.testing.assert_array_equal(value, [[1.0, 3.0, 5.0, 7.0]])
        nodes = {n.node_name for d in metadata.step_stats.dev_stats for n in d.node_stats}
        assert {"mul", "y"} <= nodes
        assert any(d.device == LOCAL_CPU for d in metadata.step_stats.dev_stats)
        assert len(metadata.partition_graphs) >= 1
        sess.run(y, feed, run_metadata=metadata)
        assert not metadata.HasField("step_stats")
