"""tf.saved_model.tag_constants: the tags that name what a meta graph of a
SavedModel is for (TensorFlow's values)."""

from tensorweave.framework.api_export import export_value

SERVING = export_value("serve", "saved_model.SERVING")
TRAINING = export_value("train", "saved_model.TRAINING")
EVAL = "eval"
GPU = export_value("gpu", "saved_model.GPU")
TPU = export_value("tpu", "saved_model.TPU")

__all__ = ["GPU", "SERVING", "TPU", "TRAINING"]
