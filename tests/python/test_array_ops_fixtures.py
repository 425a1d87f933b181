"""GraphDefs with the array ops of issue 10 recorded from TensorFlow 2.21
(tests/fixtures/tf_array_ops, written by tests/fixtures/record_array_ops.py)
import with tf.import_graph_def and reproduce every recorded case, the
gradient graphs TensorFlow built included: scans, top_k, in_top_k, unique
and band_part; gather_nd, scatter_nd and the tensor_scatter ops; mirror
pads, space/depth and space/batch moves, and a Conv2D gradient (ShapeN)."""

import os

import numpy as np
import pytest
import tensorweave as tf
from recorded_graphs import (
    assert_fixtures_present,
    fixture_graphs,
    fixture_name,
    graph_ops,
    imported,
    load_cases,
    load_graph_def,
)

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_array_ops")
GRAPHS = fixture_graphs(FIXTURES)
# Float results agree to float rounding (sums in another order), relative
# to each tensor's own scale; integer and bool results exactly.
RTOL = 1e-5


def test_every_fixture_is_present():
    assert_fixtures_present(GRAPHS, {"scan_sort", "gather_scatter", "spatial"})


def test_fixtures_hold_the_ops_they_cover():
    ops = {fixture_name(p): graph_ops(load_graph_def(p)) for p in GRAPHS}
    assert {"Cumsum", "Cumprod", "TopKV2", "InTopKV2", "Unique", "MatrixBandPart"} <= ops[
        "scan_sort"
    ]
    assert {
        "GatherNd",
        "ScatterNd",
        "TensorScatterUpdate",
        "TensorScatterAdd",
        "TensorScatterSub",
    } <= ops["gather_scatter"]
    assert {
        "ShapeN",
        "IdentityN",
        "MirrorPad",
        "MirrorPadGrad",
        "SpaceToDepth",
        "DepthToSpace",
        "SpaceToBatchND",
        "BatchToSpaceND",
    } <= ops["spatial"]


@pytest.mark.parametrize("path", GRAPHS, ids=fixture_name)
def test_fixture_reproduces_every_recorded_case(path):
    graph = imported(load_graph_def(path))
    with tf.Session(graph=graph) as sess:
        for feeds, fetches in load_cases(path):
            results = sess.run(list(fetches), feed_dict=feeds)
            for (name, expected), result in zip(fetches.items(), results):
                assert result.dtype == expected.dtype, name
                assert result.shape == expected.shape, name
                if np.issubdtype(expected.dtype, np.floating):
                    scale = float(np.max(np.abs(expected))) if expected.size else 0.0
                    np.testing.assert_allclose(
                        result, expected, rtol=RTOL, atol=RTOL * scale, err_msg=name
                    )
                else:
                    np.testing.assert_array_equal(result, expected, err_msg=name)
