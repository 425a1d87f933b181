"""Milliseconds per step of two conv nets, tensorweave and TensorFlow
(tf.compat.v1) side by side in one run (issue 12's benchmark table):

- "small conv net inference": batch 8 of 32x32x3 images through three
  blocks of conv 3x3 (SAME, 32/64/64 channels) + bias + relu + max pool
  2x2, then a dense layer to 10 logits;
- "tutorial CNN training step": the classic TF1 MNIST tutorial network at
  batch 128 (conv 5x5x32 + relu + pool, conv 5x5x64 + relu + pool, dense
  1024 + relu, dropout 0.5, dense 10, sparse softmax cross entropy, Adam).

Both frameworks build the same graph from the same numpy weights; the
input batch is a variable (inference) or fed once per step (training,
as the tutorial feeds its batches). Each figure is the best mean of
`--repeats` rounds of a few steps.

Usage: PYTHONPATH=python python bench/conv_net.py [--repeats N]
"""

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tensorflow_side

STEPS_PER_ROUND = 5


def _weights(rng, shape):
    fan_in = int(np.prod(shape[:-1]))
    return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)


def _conv_block(tf, x, filter_value, bias_value):
    w = tf.Variable(filter_value)
    b = tf.Variable(bias_value)
    y = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"), b))
    return tf.nn.max_pool(y, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")


def _best_ms(run, repeats):
    for _ in range(2):  # warm up: first runs build the executor and caches
        run()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(STEPS_PER_ROUND):
            run()
        best = min(best, (time.perf_counter() - start) / STEPS_PER_ROUND)
    return best * 1e3


def small_conv_net_inference(tf, repeats):
    rng = np.random.default_rng(0)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.Variable(rng.standard_normal([8, 32, 32, 3]).astype(np.float32))
        h = x
        depth = 3
        for out_depth in (32, 64, 64):
            h = _conv_block(
                tf, h, _weights(rng, [3, 3, depth, out_depth]), np.zeros(out_depth, np.float32)
            )
            depth = out_depth
        flat = tf.reshape(h, [8, 4 * 4 * 64])
        logits = tf.matmul(flat, tf.Variable(_weights(rng, [4 * 4 * 64, 10])))
        init = tf.global_variables_initializer()
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        return _best_ms(lambda: sess.run(logits), repeats)


def tutorial_cnn_training_step(tf, repeats):
    rng = np.random.default_rng(1)
    batch = 128
    images = rng.random([batch, 28, 28, 1], dtype=np.float32)
    labels = rng.integers(0, 10, batch).astype(np.int64)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [batch, 28, 28, 1])
        y = tf.placeholder(tf.int64, [batch])
        h = _conv_block(tf, x, _weights(rng, [5, 5, 1, 32]), np.full(32, 0.1, np.float32))
        h = _conv_block(tf, h, _weights(rng, [5, 5, 32, 64]), np.full(64, 0.1, np.float32))
        flat = tf.reshape(h, [batch, 7 * 7 * 64])
        w1 = tf.Variable(_weights(rng, [7 * 7 * 64, 1024]))
        b1 = tf.Variable(np.full(1024, 0.1, np.float32))
        dense = tf.nn.relu(tf.matmul(flat, w1) + b1)
        dropped = tf.nn.dropout(dense, rate=0.5)
        w2 = tf.Variable(_weights(rng, [1024, 10]))
        b2 = tf.Variable(np.full(10, 0.1, np.float32))
        logits = tf.matmul(dropped, w2) + b2
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
        )
        train = tf.train.AdamOptimizer(1e-4).minimize(loss)
        init = tf.global_variables_initializer()
    feed = {x: images, y: labels}
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        return _best_ms(lambda: sess.run(train, feed), repeats)


def bench(tf, repeats):
    return {
        "small conv net inference, batch 8": small_conv_net_inference(tf, repeats),
        "tutorial CNN training step, batch 128": tutorial_cnn_training_step(tf, repeats),
    }


if __name__ == "__main__":
    tensorflow_side.compare_main(__file__, bench, "conv nets, ms per step", 5)
