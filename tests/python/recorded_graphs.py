"""GraphDefs recorded from real TensorFlow with their cases, as the
generators in tests/fixtures/ write them: NAME.pb is a binary GraphDef and
NAME.npz holds, for each case k, feed<k>__<tensor> inputs and
fetch<k>__<tensor> expected outputs.

    for feeds, fetches in load_cases(path): ...
    with tf.Session(graph=imported(load_graph_def(path))) as sess:
        assert_reproduces(sess, path)

    GRAPHS = fixture_graphs(FIXTURES)           # parametrize with ids=fixture_name
    assert_fixtures_present(GRAPHS, {"cond", "while"})
"""

import glob
import os
import re

import numpy as np
import tensorweave as tf


def load_cases(pb_path):
    """[(feeds, fetches)] per recorded case, each keyed by tensor name."""
    recorded = np.load(pb_path[:-3] + ".npz")
    cases = {}
    for key in recorded.files:
        kind, k, tensor = re.fullmatch(r"(feed|fetch)(\d+)__(.+)", key).groups()
        cases.setdefault(int(k), ({}, {}))[kind == "fetch"][tensor] = recorded[key]
    return [cases[k] for k in sorted(cases)]


def fixture_graphs(directory):
    """The recorded GraphDefs (NAME.pb paths) of a fixture directory, sorted."""
    return sorted(glob.glob(os.path.join(directory, "*.pb")))


def fixture_name(pb_path):
    """NAME of NAME.pb; also a readable pytest id."""
    return os.path.basename(pb_path)[: -len(".pb")]


def assert_fixtures_present(pb_paths, expected):
    """Every name in `expected` is among the recorded graphs."""
    names = {fixture_name(path) for path in pb_paths}
    assert expected <= names, f"fixtures missing: {sorted(expected - names)}"


def graph_ops(graph_def):
    """The op types of the graph and of its library's function bodies."""
    ops = {node.op for node in graph_def.node}
    for function in graph_def.library.function:
        ops |= {node.op for node in function.node_def}
    return ops


def load_graph_def(pb_path):
    with open(pb_path, "rb") as f:
        return tf.GraphDef.FromString(f.read())


def imported(graph_def):
    """A new graph holding `graph_def` under its own names."""
    graph = tf.Graph()
    with graph.as_default():
        tf.import_graph_def(graph_def, name="")
    return graph


def assert_reproduces(sess, pb_path, rtol=0.0, atol=0.0):
    """`sess` (on the recorded graph) gives every case's fetches with their
    dtypes: exactly by default, else within the tolerances."""
    for feeds, fetches in load_cases(pb_path):
        results = sess.run(list(fetches), feed_dict=feeds)
        for name, result, expected in zip(fetches, results, fetches.values()):
            assert result.dtype == expected.dtype, name
            np.testing.assert_allclose(
                result, expected, rtol=rtol, atol=atol, err_msg=f"{name} for {feeds}"
            )
