"""TensorFlow's own client (tf.compat.v1.Session over gRPC) asking a server
for RunMetadata, for tests/interop/test_tf_client_run_metadata.py. Run with
the interop virtualenv's Python:

    python tests/interop/tf_client_run_metadata.py grpc://localhost:2222

Prints one line of JSON: what a FULL_TRACE run with output_partition_graphs
reported (devices, node names, partition graphs) and what an untraced run
reported, or {"error": {...}} when a call failed.
"""

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf

v1 = tf.compat.v1
v1.disable_v2_behavior()

CALL_TIMEOUT_MS = 30000


def traced_and_untraced(target):
    x = v1.placeholder(tf.float32, [1, 4], name="x")
    y = tf.add(x * 2.0, 1.0, name="y")
    feed = {x: np.arange(4, dtype=np.float32).reshape(1, 4)}
    config = v1.ConfigProto(operation_timeout_in_ms=CALL_TIMEOUT_MS)
    traced = v1.RunMetadata()
    untraced = v1.RunMetadata()
    options = v1.RunOptions(trace_level=v1.RunOptions.FULL_TRACE, output_partition_graphs=True)
    with v1.Session(target, config=config) as sess:
        value = sess.run(y, feed, options=options, run_metadata=traced)
        sess.run(y, feed, options=v1.RunOptions(), run_metadata=untraced)
    nodes = [n.node_name for d in traced.step_stats.dev_stats for n in d.node_stats]
    return {
        "y": value.tolist(),
        "devices": [d.device for d in traced.step_stats.dev_stats],
        "nodes": nodes,
        "all_start_micros": [
            n.all_start_micros for d in traced.step_stats.dev_stats for n in d.node_stats
        ],
        "partition_graph_nodes": [[n.name for n in g.node] for g in traced.partition_graphs],
        "untraced_has_step_stats": untraced.HasField("step_stats"),
        "untraced_partition_graphs": len(untraced.partition_graphs),
    }


def main():
    try:
        result = traced_and_untraced(sys.argv[1])
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
