"""tf.contrib: the parts of TensorFlow 1.x's contrib that tensorweave provides
(tf.contrib.memory_stats)."""

from tensorweave.contrib import memory_stats  # noqa: F401
from tensorweave.framework import missing_names as _missing_names

# tf.contrib.layers and the rest raise an AttributeError that says so.
__getattr__ = _missing_names.module_getattr(__name__)
