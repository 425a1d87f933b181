"""tf.saved_model (TensorFlow 1.x's, as tf.compat.v1.saved_model): writing
and loading SavedModel directories, TensorFlow's format for a trained graph
with its variables, signatures and assets.

    tf.saved_model.simple_save(sess, "export/1", {"x": x}, {"y": y})
    with tf.Session(graph=tf.Graph()) as sess:
        tf.saved_model.loader.load(sess, [tf.saved_model.SERVING], "export/1")

The modules are TensorFlow's namespaces (tf.saved_model.builder, .loader,
.utils, .signature_def_utils, .tag_constants, .signature_constants,
.constants, .main_op); the names TensorFlow also puts at this level are
declared where they are defined (@tf_export("saved_model.<name>")).
"""

from tensorweave.framework import api_export as _api_export
from tensorweave.saved_model import (  # noqa: F401
    builder,
    constants,
    loader,
    main_op,
    signature_constants,
    signature_def_utils,
    simple_save,
    tag_constants,
    utils,
)

globals().update(_api_export.exported_names("saved_model"))

from tensorweave.framework import missing_names as _missing_names

# A public name tensorweave lacks raises an AttributeError that says so.
__getattr__ = _missing_names.module_getattr(__name__)
