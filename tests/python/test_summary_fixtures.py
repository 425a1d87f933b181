"""The summary ops against TensorFlow 2.21: graphs recorded by
tests/fixtures/record_summaries.py (tf.compat.v1.summary.*) import and run
here, and every Summary equals TensorFlow's field by field. PNG bytes may
differ (zlib settings), so images compare by their decoded pixels."""

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

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_summary")
GRAPHS = fixture_graphs(FIXTURES)


def test_every_summary_kind_was_recorded():
    assert_fixtures_present(GRAPHS, {"scalar", "histogram", "image", "audio", "tensor", "merged"})


def decode_png(contents):
    with tf.Graph().as_default(), tf.Session() as sess:
        return sess.run(tf.image.decode_png(contents))


def assert_same_summary(ours, theirs, where):
    assert [v.tag for v in ours.value] == [v.tag for v in theirs.value], where
    for mine, expected in zip(ours.value, theirs.value):
        kind = expected.WhichOneof("value")
        assert mine.WhichOneof("value") == kind, f"{where}: {expected.tag}"
        assert mine.metadata == expected.metadata, f"{where}: {expected.tag}"
        if kind == "image":
            pixels, expected_pixels = (
                decode_png(mine.image.encoded_image_string),
                decode_png(expected.image.encoded_image_string),
            )
            np.testing.assert_array_equal(pixels, expected_pixels, err_msg=f"{where}: {mine.tag}")
            mine.image.ClearField("encoded_image_string")
            expected.image.ClearField("encoded_image_string")
        assert mine == expected, f"{where}: {expected.tag}"


@pytest.mark.parametrize("pb_path", GRAPHS, ids=fixture_name)
def test_summaries_equal_tensorflows(pb_path):
    graph = imported(load_graph_def(pb_path))
    with tf.Session(graph=graph) as sess:
        for k, (feeds, fetches) in enumerate(load_cases(pb_path)):
            results = sess.run(list(fetches), feed_dict=feeds)
            for name, result in zip(fetches, results):
                ours = tf.summary.Summary.FromString(result)
                theirs = tf.summary.Summary.FromString(fetches[name].tobytes())
                assert_same_summary(ours, theirs, f"{fixture_name(pb_path)} case {k} {name}")
