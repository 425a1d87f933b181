"""tf.saved_model.simple_save: a SavedModel for serving in one call.

    tf.saved_model.simple_save(sess, "export/1", inputs={"x": x}, outputs={"y": y})

writes the session's graph and variables with one predict signature under
"serving_default" and the tag "serve", as TensorFlow's simple_save does
(devices cleared, the graph's asset_filepaths collection shipped).
"""

from tensorweave.framework import ops
from tensorweave.framework.api_export import tf_export
from tensorweave.saved_model import (
    builder,
    constants,
    signature_constants,
    signature_def_utils,
    tag_constants,
)

__all__ = ["simple_save"]


@tf_export("saved_model.simple_save")
def simple_save(session, export_dir, inputs, outputs, legacy_init_op=None):
    """Saves `session`'s graph and variables to `export_dir` for serving:
    `inputs` and `outputs` ({name: Tensor}) make the predict signature."""
    signature_def_map = {
        signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY: (
            signature_def_utils.predict_signature_def(inputs, outputs)
        )
    }
    saved_model_builder = builder.SavedModelBuilder(export_dir)
    saved_model_builder.add_meta_graph_and_variables(
        session,
        tags=[tag_constants.SERVING],
        signature_def_map=signature_def_map,
        assets_collection=ops.get_collection(constants.ASSET_FILEPATHS_COLLECTION),
        main_op=legacy_init_op,
        clear_devices=True,
    )
    saved_model_builder.save()
