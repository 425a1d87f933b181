"""tf.contrib.memory_stats: ops that read the statistics of the device's
allocator when they run, as TensorFlow 1.x's contrib.memory_stats.

    peak = tf.contrib.memory_stats.MaxBytesInUse()
    with tf.Session() as sess:
        sess.run(train_op)
        print(sess.run(peak))  # the most bytes tensor buffers held at once

TensorFlow registers BytesInUse and MaxBytesInUse on GPU only (its CPU
allocator cannot count what malloc holds); tensorweave counts every tensor
buffer it allocates, so they run on CPU. BytesLimit is 0: no limit is set.
"""

from tensorweave.framework import ops
from tensorweave.framework.gradient_registry import NotDifferentiable
from tensorweave.ops.op_builder import make_op

# Readings of the allocator, with no inputs to differentiate.
for _op_type in ("BytesInUse", "BytesLimit", "MaxBytesInUse"):
    NotDifferentiable(_op_type)


def _memory_stats_op(op_type, name):
    with ops.name_scope(name, op_type, []) as scope:
        return make_op(op_type, [], {}, scope)


def BytesInUse(name=None):
    """An int64 scalar: bytes of tensor buffers in use when it runs."""
    return _memory_stats_op("BytesInUse", name)


def BytesLimit(name=None):
    """An int64 scalar: the most bytes the allocator may hold (0: no limit)."""
    return _memory_stats_op("BytesLimit", name)


def MaxBytesInUse(name=None):
    """An int64 scalar: the peak of BytesInUse since the process started."""
    return _memory_stats_op("MaxBytesInUse", name)
