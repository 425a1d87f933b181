"""tf.contrib: the parts of TensorFlow 1.x's contrib that tensorweave provides
(tf.contrib.memory_stats)."""

from tensorweave.contrib import memory_stats  # noqa: F401
