"""tf.saved_model.signature_def_utils and utils: TensorInfo and SignatureDef
protos as TensorFlow builds and checks them (same fields, same errors)."""

import numpy as np
import pytest
import tensorweave as tf
from tensorweave.proto import meta_graph_pb2, types_pb2

utils = tf.saved_model.utils
signature_def_utils = tf.saved_model.signature_def_utils


def test_build_tensor_info_of_a_dense_tensor():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    info = utils.build_tensor_info(x)
    assert info.name == "x:0"
    assert info.dtype == types_pb2.DT_FLOAT
    assert [d.size for d in info.tensor_shape.dim] == [-1, 3]
    assert utils.get_tensor_from_tensor_info(info) is x
    unknown = utils.build_tensor_info(tf.placeholder(tf.int64, None, name="u"))
    assert unknown.tensor_shape.unknown_rank


def test_build_tensor_info_of_a_sparse_tensor_names_its_components():
    sparse = tf.SparseTensor(
        tf.constant([[0, 1]], tf.int64, name="i"),
        tf.constant([2.5], name="v"),
        tf.constant([2, 3], tf.int64, name="s"),
    )
    info = utils.build_tensor_info(sparse)
    assert info.WhichOneof("encoding") == "coo_sparse"
    assert info.coo_sparse.values_tensor_name == "v:0"
    assert info.coo_sparse.indices_tensor_name == "i:0"
    assert info.coo_sparse.dense_shape_tensor_name == "s:0"
    assert info.dtype == types_pb2.DT_FLOAT
    again = utils.get_tensor_from_tensor_info(info)
    with tf.Session() as sess:
        value = sess.run(again)
    np.testing.assert_array_equal(value.values, [2.5])
    np.testing.assert_array_equal(value.dense_shape, [2, 3])


def test_get_tensor_from_tensor_info_under_a_scope_and_its_errors():
    with tf.name_scope("scope"):
        y = tf.constant(1.0, name="y")
    info = meta_graph_pb2.TensorInfo(name="y:0")
    assert utils.get_tensor_from_tensor_info(info, import_scope="scope") is y
    with pytest.raises(KeyError):
        utils.get_tensor_from_tensor_info(meta_graph_pb2.TensorInfo(name="missing:0"))
    with pytest.raises(ValueError, match="Invalid TensorInfo.encoding: None"):
        utils.get_tensor_from_tensor_info(meta_graph_pb2.TensorInfo())


def test_predict_signature_def():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = tf.identity(x, name="y")
    signature = signature_def_utils.predict_signature_def({"in": x}, {"out": y})
    assert signature.method_name == "tensorflow/serving/predict"
    assert signature.inputs["in"].name == "x:0"
    assert signature.outputs["out"].name == "y:0"
    assert signature_def_utils.is_valid_signature(signature)
    with pytest.raises(ValueError, match="Prediction `inputs` cannot be None or empty."):
        signature_def_utils.predict_signature_def({}, {"out": y})
    with pytest.raises(ValueError, match="Prediction `outputs` cannot be None or empty."):
        signature_def_utils.predict_signature_def({"in": x}, None)


def test_classification_signature_def():
    examples = tf.placeholder(tf.string, [None], name="examples")
    classes = tf.constant(["a", "b"], name="classes")
    scores = tf.constant([0.5, 0.5], name="scores")
    signature = signature_def_utils.classification_signature_def(examples, classes, scores)
    assert signature.method_name == "tensorflow/serving/classify"
    assert sorted(signature.inputs) == ["inputs"]
    assert sorted(signature.outputs) == ["classes", "scores"]
    assert signature_def_utils.is_valid_signature(signature)
    only_scores = signature_def_utils.classification_signature_def(examples, None, scores)
    assert sorted(only_scores.outputs) == ["scores"]
    with pytest.raises(ValueError, match="cannot both be None"):
        signature_def_utils.classification_signature_def(examples, None, None)
    with pytest.raises(ValueError, match="input tensors must be of type string"):
        signature_def_utils.classification_signature_def(scores, classes, None)
    with pytest.raises(ValueError, match="classes must be of type string"):
        signature_def_utils.classification_signature_def(examples, scores, None)
    with pytest.raises(ValueError, match="scores must be a float Tensor"):
        signature_def_utils.classification_signature_def(examples, None, classes)
    with pytest.raises(ValueError, match="must be a string Tensor"):
        signature_def_utils.classification_signature_def("examples", classes, None)


def test_regression_signature_def():
    examples = tf.placeholder(tf.string, [None], name="examples")
    predictions = tf.constant([1.5], name="predictions")
    signature = signature_def_utils.regression_signature_def(examples, predictions)
    assert signature.method_name == "tensorflow/serving/regress"
    assert signature.inputs["inputs"].name == "examples:0"
    assert signature.outputs["outputs"].name == "predictions:0"
    assert signature_def_utils.is_valid_signature(signature)
    with pytest.raises(ValueError, match="Regression `examples` cannot be None."):
        signature_def_utils.regression_signature_def(None, predictions)
    with pytest.raises(ValueError, match="Regression `predictions` cannot be None."):
        signature_def_utils.regression_signature_def(examples, None)
    with pytest.raises(ValueError, match="output tensors must be of type float"):
        signature_def_utils.regression_signature_def(examples, tf.constant([1], name="ints"))


def test_is_valid_signature_rejects_what_serving_cannot_serve():
    examples = tf.placeholder(tf.string, [None], name="examples")
    predictions = tf.constant([1.5], name="predictions")
    assert not signature_def_utils.is_valid_signature(None)
    assert not signature_def_utils.is_valid_signature(meta_graph_pb2.SignatureDef())
    regress = signature_def_utils.regression_signature_def(examples, predictions)
    regress.outputs["extra"].CopyFrom(regress.outputs["outputs"])
    assert not signature_def_utils.is_valid_signature(regress)
    classify = signature_def_utils.classification_signature_def(examples, None, predictions)
    classify.outputs["scores"].dtype = types_pb2.DT_DOUBLE
    assert not signature_def_utils.is_valid_signature(classify)
    predict = signature_def_utils.build_signature_def(
        {"x": utils.build_tensor_info(examples)}, {}, "tensorflow/serving/predict"
    )
    assert not signature_def_utils.is_valid_signature(predict)


def test_build_signature_def_with_defaults_from_constants():
    x = tf.placeholder_with_default(tf.constant([1.0, 2.0], name="default_x"), [2], name="x")
    signature = signature_def_utils.build_signature_def(
        {"x": utils.build_tensor_info(x)},
        {"y": utils.build_tensor_info(x)},
        "custom/method",
        defaults={"x": x.op.inputs[0]},
    )
    assert signature.method_name == "custom/method"
    assert signature.defaults["x"].dtype == types_pb2.DT_FLOAT
    with pytest.raises(ValueError, match="Unable to convert object"):
        signature_def_utils.build_signature_def(defaults={"x": x})
