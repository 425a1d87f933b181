"""Graphs our tf.cond / tf.while_loop build line up with TensorFlow's.

Each program of tests/fixtures/control_flow_graphs.py is what
tests/fixtures/record_control_flow.py runs under TensorFlow 2.21
(tf.compat.v1, control flow v2 off) to write tests/fixtures/tf_control_flow/NAME.pb. Built here with tensorweave, it must
give the same nodes: the same names, op types, data inputs in order, control
inputs, and the frame attrs of every Enter; and run to the outputs
TensorFlow recorded. A GraphDef we build also round-trips through
import_graph_def and runs the same.

The programs of tests/fixtures/control_flow_programs.py (control
dependencies, variables, shape invariants, maximum_iterations, nested loop
variables, tf.case) are compared the same way with what
tests/fixtures/record_control_flow_builders.py recorded from TensorFlow into
tf_control_flow/builders.json.
"""

import json
import os
import sys

import numpy as np
import pytest
import tensorweave as tf
from recorded_graphs import load_cases, load_graph_def

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "fixtures"))
import control_flow_graphs
import control_flow_programs

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_control_flow")
_FRAME_ATTRS = ("frame_name", "is_constant", "parallel_iterations")


def node_summary(graph_def):
    """{name: (op, data inputs, control inputs, frame attrs)} of a GraphDef."""
    summary = {}
    for node in graph_def.node:
        # "x" and "x:0" name the same tensor.
        data = [name.removesuffix(":0") for name in node.input if name[0] != "^"]
        controls = sorted(name[1:] for name in node.input if name[0] == "^")
        attrs = tuple(
            (key, node.attr[key].SerializeToString()) for key in _FRAME_ATTRS if key in node.attr
        )
        summary[node.name] = (node.op, data, controls, attrs)
    return summary


def recorded_graph_def(name):
    return load_graph_def(os.path.join(FIXTURES, name + ".pb"))


def recorded_cases(name):
    """[(feeds {tensor name: value}, expected {tensor name: value})]."""
    return load_cases(os.path.join(FIXTURES, name + ".pb"))


def build(name):
    """Builds program `name` into the default graph; returns its fetches."""
    _, _, fetches = control_flow_graphs.GRAPHS[name](tf)
    return fetches


@pytest.mark.parametrize("name", sorted(control_flow_graphs.GRAPHS))
def test_graph_has_the_nodes_tensorflow_builds(name):
    graph = tf.Graph()
    with graph.as_default():
        build(name)
    ours = node_summary(graph.as_graph_def())
    theirs = node_summary(recorded_graph_def(name))
    assert sorted(ours) == sorted(theirs)
    for node_name, expected in theirs.items():
        assert ours[node_name] == expected, node_name


@pytest.mark.parametrize("name", sorted(control_flow_graphs.GRAPHS))
def test_graph_computes_what_tensorflow_recorded(name):
    graph = tf.Graph()
    with graph.as_default():
        fetches = build(name)
    with tf.Session(graph=graph) as sess:
        for feeds, expected in recorded_cases(name):
            results = sess.run(fetches, feed_dict=feeds)
            for fetch, result in zip(fetches, results):
                np.testing.assert_allclose(result, expected[fetch], rtol=1e-6)


@pytest.mark.parametrize("name", sorted(control_flow_graphs.GRAPHS))
def test_graph_def_we_build_round_trips_through_import(name):
    built = tf.Graph()
    with built.as_default():
        fetches = build(name)
    graph_def = built.as_graph_def()
    imported = tf.Graph()
    with imported.as_default():
        tf.import_graph_def(graph_def, name="")
    assert node_summary(imported.as_graph_def()) == node_summary(graph_def)
    with tf.Session(graph=imported) as sess:
        for feeds, expected in recorded_cases(name):
            results = sess.run(fetches, feed_dict=feeds)
            for fetch, result in zip(fetches, results):
                np.testing.assert_allclose(result, expected[fetch], rtol=1e-6)


# --- the programs of tests/fixtures/control_flow_programs.py ------------------------

with open(os.path.join(FIXTURES, "builders.json")) as _f:
    BUILDERS = json.load(_f)["programs"]


def test_every_program_is_recorded():
    assert sorted(BUILDERS) == sorted(control_flow_programs.PROGRAMS)


@pytest.mark.parametrize("name", sorted(control_flow_programs.PROGRAMS))
def test_program_builds_the_control_flow_nodes_tensorflow_builds(name):
    graph = tf.Graph()
    with graph.as_default():
        control_flow_programs.PROGRAMS[name](tf)
    ours = control_flow_programs.control_flow_nodes(graph.as_graph_def())
    theirs = BUILDERS[name]["nodes"]
    assert theirs, "nothing recorded"
    assert sorted(ours) == sorted(theirs)
    for node_name, expected in theirs.items():
        assert ours[node_name] == expected, node_name


@pytest.mark.parametrize("name", sorted(control_flow_programs.PROGRAMS))
def test_program_computes_what_tensorflow_recorded(name):
    graph = tf.Graph()
    with graph.as_default():
        fetches, _ = control_flow_programs.PROGRAMS[name](tf)
        init = tf.global_variables_initializer()
    for recorded in BUILDERS[name]["runs"]:
        feeds = {
            tensor: np.array(entry["value"], entry["dtype"])
            for tensor, entry in recorded["feeds"].items()
        }
        with tf.Session(graph=graph) as sess:
            sess.run(init)
            results = sess.run(fetches, feed_dict=feeds)
        for fetch, result in zip(fetches, results):
            expected = recorded["fetches"][fetch]
            assert np.asarray(result).dtype.name == expected["dtype"], fetch
            np.testing.assert_allclose(result, expected["value"], rtol=1e-6, err_msg=fetch)
