"""tf.saved_model.signature_def_utils: SignatureDefs, the named entry
points a SavedModel offers (inputs to feed, outputs to fetch, a method name).

    signature = tf.saved_model.signature_def_utils.predict_signature_def(
        inputs={"images": x}, outputs={"scores": y})
    builder.add_meta_graph_and_variables(
        sess, [tf.saved_model.tag_constants.SERVING],
        signature_def_map={"serving_default": signature})

The checks and error messages are TensorFlow's: the classify and regress
signatures take serialized tf.Examples (a string tensor) as TensorFlow
Serving's APIs do.
"""

from tensorweave.framework import ops
from tensorweave.framework.api_export import tf_export
from tensorweave.proto import meta_graph_pb2, types_pb2
from tensorweave.saved_model import signature_constants, utils

__all__ = [
    "build_signature_def",
    "classification_signature_def",
    "is_valid_signature",
    "predict_signature_def",
    "regression_signature_def",
]


@tf_export("saved_model.build_signature_def")
def build_signature_def(inputs=None, outputs=None, method_name=None, defaults=None):
    """A SignatureDef from {key: TensorInfo} maps and a method name;
    `defaults` maps input keys to Const tensors (their values are stored)."""
    signature_def = meta_graph_pb2.SignatureDef()
    for key, info in (inputs or {}).items():
        signature_def.inputs[key].CopyFrom(info)
    for key, info in (outputs or {}).items():
        signature_def.outputs[key].CopyFrom(info)
    if method_name is not None:
        signature_def.method_name = method_name
    for key, default in (defaults or {}).items():
        if not isinstance(default, ops.Tensor) or default.op.type != "Const":
            raise ValueError(
                f"Unable to convert object {default} of type {type(default)} to TensorProto."
            )
        signature_def.defaults[key].ParseFromString(
            default.op.get_attr("value").SerializeToString()
        )
    return signature_def


@tf_export("saved_model.regression_signature_def")
def regression_signature_def(examples, predictions):
    """The signature of TensorFlow Serving's Regress API: serialized
    tf.Examples (string) in, float predictions out."""
    if examples is None:
        raise ValueError("Regression `examples` cannot be None.")
    if not isinstance(examples, ops.Tensor):
        raise ValueError(  # noqa: TRY004 (TensorFlow's error type)
            "Expected regression `examples` to be of type Tensor. "
            f"Found `examples` of type {type(examples)}."
        )
    if predictions is None:
        raise ValueError("Regression `predictions` cannot be None.")
    input_info = utils.build_tensor_info(examples)
    if input_info.dtype != types_pb2.DT_STRING:
        raise ValueError(
            "Regression input tensors must be of type string. "
            f"Found tensors with type {input_info.dtype}."
        )
    output_info = utils.build_tensor_info(predictions)
    if output_info.dtype != types_pb2.DT_FLOAT:
        raise ValueError(
            "Regression output tensors must be of type float. "
            f"Found tensors with type {output_info.dtype}."
        )
    return build_signature_def(
        {signature_constants.REGRESS_INPUTS: input_info},
        {signature_constants.REGRESS_OUTPUTS: output_info},
        signature_constants.REGRESS_METHOD_NAME,
    )


@tf_export("saved_model.classification_signature_def")
def classification_signature_def(examples, classes, scores):
    """The signature of TensorFlow Serving's Classify API: serialized
    tf.Examples (string) in, string classes and/or float scores out."""
    if examples is None:
        raise ValueError("Classification `examples` cannot be None.")
    if not isinstance(examples, ops.Tensor):
        raise ValueError(  # noqa: TRY004 (TensorFlow's error type)
            "Classification `examples` must be a string Tensor. "
            f"Found `examples` of type {type(examples)}."
        )
    if classes is None and scores is None:
        raise ValueError("Classification `classes` and `scores` cannot both be None.")
    input_info = utils.build_tensor_info(examples)
    if input_info.dtype != types_pb2.DT_STRING:
        raise ValueError(
            "Classification input tensors must be of type string. "
            f"Found tensors of type {input_info.dtype}"
        )
    outputs = {}
    if classes is not None:
        classes_info = utils.build_tensor_info(classes)
        if classes_info.dtype != types_pb2.DT_STRING:
            raise ValueError(
                "Classification classes must be of type string Tensor. "
                f"Found tensors of type {classes_info.dtype}.`"
            )
        outputs[signature_constants.CLASSIFY_OUTPUT_CLASSES] = classes_info
    if scores is not None:
        scores_info = utils.build_tensor_info(scores)
        if scores_info.dtype != types_pb2.DT_FLOAT:
            raise ValueError("Classification scores must be a float Tensor.")
        outputs[signature_constants.CLASSIFY_OUTPUT_SCORES] = scores_info
    return build_signature_def(
        {signature_constants.CLASSIFY_INPUTS: input_info},
        outputs,
        signature_constants.CLASSIFY_METHOD_NAME,
    )


@tf_export("saved_model.predict_signature_def")
def predict_signature_def(inputs, outputs):
    """The signature of TensorFlow Serving's Predict API: any named tensors
    in, any named tensors out."""
    if not inputs:
        raise ValueError("Prediction `inputs` cannot be None or empty.")
    if not outputs:
        raise ValueError("Prediction `outputs` cannot be None or empty.")
    return build_signature_def(
        {key: utils.build_tensor_info(tensor) for key, tensor in inputs.items()},
        {key: utils.build_tensor_info(tensor) for key, tensor in outputs.items()},
        signature_constants.PREDICT_METHOD_NAME,
    )


def op_signature_def(op, key):
    """A signature whose one output names an operation (how TensorFlow 2
    builders store the init and train ops)."""
    return build_signature_def(outputs={key: utils.build_tensor_info_from_op(op)})


@tf_export("saved_model.is_valid_signature")
def is_valid_signature(signature_def):
    """Whether TensorFlow Serving can serve `signature_def`: a predict
    signature with inputs and outputs, or a classify or regress signature
    with exactly the keys and dtypes those APIs take."""
    if signature_def is None:
        return False
    return (
        _is_valid_classification_signature(signature_def)
        or _is_valid_regression_signature(signature_def)
        or _is_valid_predict_signature(signature_def)
    )


def _is_valid_predict_signature(signature_def):
    return (
        signature_def.method_name == signature_constants.PREDICT_METHOD_NAME
        and bool(signature_def.inputs)
        and bool(signature_def.outputs)
    )


def _has_only(tensor_map, key, dtype):
    return set(tensor_map.keys()) == {key} and tensor_map[key].dtype == dtype


def _is_valid_regression_signature(signature_def):
    return (
        signature_def.method_name == signature_constants.REGRESS_METHOD_NAME
        and _has_only(signature_def.inputs, signature_constants.REGRESS_INPUTS, types_pb2.DT_STRING)
        and _has_only(
            signature_def.outputs, signature_constants.REGRESS_OUTPUTS, types_pb2.DT_FLOAT
        )
    )


def _is_valid_classification_signature(signature_def):
    if signature_def.method_name != signature_constants.CLASSIFY_METHOD_NAME:
        return False
    if not _has_only(
        signature_def.inputs, signature_constants.CLASSIFY_INPUTS, types_pb2.DT_STRING
    ):
        return False
    allowed = {
        signature_constants.CLASSIFY_OUTPUT_CLASSES: types_pb2.DT_STRING,
        signature_constants.CLASSIFY_OUTPUT_SCORES: types_pb2.DT_FLOAT,
    }
    outputs = signature_def.outputs
    if not outputs or set(outputs.keys()) - set(allowed):
        return False
    return all(outputs[key].dtype == dtype for key, dtype in allowed.items() if key in outputs)
