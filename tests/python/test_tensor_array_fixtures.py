"""GraphDefs with TensorArrays and Stacks recorded from real TensorFlow
(tests/fixtures/tf_tensor_array, written by tests/fixtures/record_tensor_arrays.py)
import with tf.import_graph_def and reproduce every recorded case: the
TensorArray methods, map_fn and scan as v1 while loops, their gradients
(TensorArrayGradV3, and StackV2/StackPushV2/StackPopV2 keeping each forward
iteration's values for the backward loop) and a dynamic_size array.

NAME.pb is a binary GraphDef; NAME.npz holds, for each case k,
feed<k>__<tensor> inputs and fetch<k>__<tensor> expected outputs.
"""

import os

import pytest
import tensorweave as tf
from recorded_graphs import (
    assert_fixtures_present,
    assert_reproduces,
    fixture_graphs,
    fixture_name,
    imported,
    load_graph_def,
)

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_tensor_array")
GRAPHS = fixture_graphs(FIXTURES)
EXPECTED = {"array_methods", "map_fn", "scan", "dynamic_array"}


def test_every_tensor_array_fixture_is_present():
    assert_fixtures_present(GRAPHS, EXPECTED)


@pytest.mark.parametrize("path", GRAPHS, ids=fixture_name)
def test_fixture_reproduces_every_recorded_case(path):
    with tf.Session(graph=imported(load_graph_def(path))) as sess:
        for _ in range(2):  # a second run starts with fresh arrays and stacks
            assert_reproduces(sess, path, rtol=1e-6, atol=1e-6)
