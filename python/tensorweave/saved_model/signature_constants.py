"""tf.saved_model.signature_constants: the keys and method names of the
standard signatures (TensorFlow Serving's predict, classify and regress
APIs), with TensorFlow's values."""

from tensorweave.framework.api_export import export_value

DEFAULT_SERVING_SIGNATURE_DEF_KEY = export_value(
    "serving_default", "saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY"
)

CLASSIFY_INPUTS = export_value("inputs", "saved_model.CLASSIFY_INPUTS")
CLASSIFY_METHOD_NAME = export_value(
    "tensorflow/serving/classify", "saved_model.CLASSIFY_METHOD_NAME"
)
CLASSIFY_OUTPUT_CLASSES = export_value("classes", "saved_model.CLASSIFY_OUTPUT_CLASSES")
CLASSIFY_OUTPUT_SCORES = export_value("scores", "saved_model.CLASSIFY_OUTPUT_SCORES")

PREDICT_INPUTS = export_value("inputs", "saved_model.PREDICT_INPUTS")
PREDICT_METHOD_NAME = export_value("tensorflow/serving/predict", "saved_model.PREDICT_METHOD_NAME")
PREDICT_OUTPUTS = export_value("outputs", "saved_model.PREDICT_OUTPUTS")

REGRESS_INPUTS = export_value("inputs", "saved_model.REGRESS_INPUTS")
REGRESS_METHOD_NAME = export_value("tensorflow/serving/regress", "saved_model.REGRESS_METHOD_NAME")
REGRESS_OUTPUTS = export_value("outputs", "saved_model.REGRESS_OUTPUTS")

DEFAULT_TRAIN_SIGNATURE_DEF_KEY = "train"
DEFAULT_EVAL_SIGNATURE_DEF_KEY = "eval"
SUPERVISED_TRAIN_METHOD_NAME = "tensorflow/supervised/training"
SUPERVISED_EVAL_METHOD_NAME = "tensorflow/supervised/eval"

__all__ = [
    "CLASSIFY_INPUTS",
    "CLASSIFY_METHOD_NAME",
    "CLASSIFY_OUTPUT_CLASSES",
    "CLASSIFY_OUTPUT_SCORES",
    "DEFAULT_SERVING_SIGNATURE_DEF_KEY",
    "PREDICT_INPUTS",
    "PREDICT_METHOD_NAME",
    "PREDICT_OUTPUTS",
    "REGRESS_INPUTS",
    "REGRESS_METHOD_NAME",
    "REGRESS_OUTPUTS",
]
