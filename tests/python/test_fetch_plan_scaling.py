"""Fetching tens of thousands of outputs: the fetch plan, the output name
lookups and the per-output shape queries are linear, so 20,000 outputs of one
Split build, run and come back right (timings are measured and reported
outside the suite, not asserted here)."""

import numpy as np
import tensorweave as tf

COUNT = 20_000


def test_split_into_20000_pieces_fetches_every_piece():
    x = tf.range(COUNT)
    parts = tf.split(x, COUNT)
    assert len(parts) == COUNT
    assert all(part.shape.as_list() == [1] for part in parts)
    with tf.Session() as sess:
        values = sess.run(parts)
        again = sess.run(parts)  # the cached plan
    assert np.array_equal(np.concatenate(values), np.arange(COUNT))
    assert np.array_equal(np.concatenate(again), np.arange(COUNT))


def test_20000_fetches_by_name_with_repeats_and_feeds():
    x = tf.placeholder(tf.int32, [COUNT])
    parts = tf.split(x * 2, COUNT)
    names = [part.name for part in parts]
    graph = tf.get_default_graph()
    assert [graph.get_tensor_by_name(name) for name in names] == parts
    fetches = {"names": names, "again": parts[::-1], "fed": x}
    feed = np.arange(COUNT, dtype=np.int32)
    with tf.Session() as sess:
        result = sess.run(fetches, {x: feed})
    assert np.array_equal(np.concatenate(result["names"]), feed * 2)
    assert np.array_equal(np.concatenate(result["again"]), (feed * 2)[::-1])
    assert np.array_equal(result["fed"], feed)


def test_20000_target_operations():
    counters = [tf.no_op(name=f"noop_{i}") for i in range(COUNT)]
    with tf.Session() as sess:
        assert sess.run(counters + counters[:10]) == [None] * (COUNT + 10)
