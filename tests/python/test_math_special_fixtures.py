"""GraphDefs with the elementwise math ops recorded from TensorFlow 2.21
(tests/fixtures/tf_math_special, written by
tests/fixtures/record_math_special.py) import with tf.import_graph_def and
reproduce every recorded case: each function forward in float32 and
float64 (TensorFlow 1.x's public names, the raw ClipByValue), TensorFlow's
own gradient graph of all of them in float64, and the integer divisions
with Mod, PreventGradient and Snapshot.

Both runtimes evaluate the functions with Eigen, so float64 results agree
to a few units in the last place and float32 ones within float rounding.
"""

import os

import numpy as np
import pytest
import tensorweave as tf
from recorded_graphs import (
    assert_fixtures_present,
    fixture_graphs,
    fixture_name,
    imported,
    load_cases,
    load_graph_def,
)

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_math_special")
GRAPHS = fixture_graphs(FIXTURES)
RTOL = {np.dtype(np.float32): 2e-6, np.dtype(np.float64): 1e-13}


def test_every_math_fixture_is_present():
    assert_fixtures_present(
        GRAPHS, {"forward_float32", "forward_float64", "gradients_float64", "integers"}
    )


@pytest.mark.parametrize("path", GRAPHS, ids=fixture_name)
def test_recorded_graph_reproduces(path):
    with tf.Session(graph=imported(load_graph_def(path))) as sess:
        for feeds, fetches in load_cases(path):
            results = sess.run(list(fetches), feed_dict=feeds)
            for name, result, expected in zip(fetches, results, fetches.values()):
                assert result.dtype == expected.dtype, name
                assert result.shape == expected.shape, name
                if expected.dtype in RTOL:
                    rtol = RTOL[expected.dtype]
                    np.testing.assert_allclose(result, expected, rtol=rtol, atol=rtol, err_msg=name)
                else:
                    np.testing.assert_array_equal(result, expected, err_msg=name)
