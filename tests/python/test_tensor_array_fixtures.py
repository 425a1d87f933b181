"""GraphDefs with TensorArrays and Stacks recorded from real TensorFlow
(tests/fixtures/tf_tensor_array, written by tests/fixtures/record_tensor_arrays.py)
import with tf.import_graph_def and reproduce every recorded case: the
TensorArray methods, map_fn and scan as v1 while loops, their gradients
(TensorArrayGradV3, and StackV2/StackPushV2/StackPopV2 keeping each forward
iteration's values for the backward loop) and a dynamic_size array.

NAME.pb is a binary GraphDef; NAME.npz holds, for each case k,
feed<k>__<tensor> inputs and fetch<k>__<tensor> expected outputs.
"""

import glob
import os

import numpy as np
import pytest
import tensorweave as tf
from recorded_graphs import load_cases

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_tensor_array")
GRAPHS = sorted(glob.glob(os.path.join(FIXTURES, "*.pb")))
EXPECTED = {"array_methods", "map_fn", "scan", "dynamic_array"}


def test_every_tensor_array_fixture_is_present():
    names = {os.path.basename(p)[:-3] for p in GRAPHS}
    assert EXPECTED <= names, f"missing under {FIXTURES}: {EXPECTED - names}"


@pytest.mark.parametrize("path", GRAPHS, ids=lambda p: os.path.basename(p)[:-3])
def test_fixture_reproduces_every_recorded_case(path):
    with open(path, "rb") as f:
        graph_def = tf.GraphDef.FromString(f.read())
    cases = load_cases(path)
    assert cases
    graph = tf.Graph()
    with graph.as_default():
        names = list(cases[0][1])
        returned = tf.import_graph_def(graph_def, return_elements=names, name="")
    with tf.Session(graph=graph) as sess:
        for _ in range(2):  # a second run starts with fresh arrays and stacks
            for feeds, fetches in cases:
                results = sess.run(dict(zip(names, returned)), feed_dict=feeds)
                for name, expected in fetches.items():
                    np.testing.assert_allclose(
                        results[name], expected, rtol=1e-6, atol=1e-6, err_msg=name
                    )
