"""tensorweave: `import tensorweave as tf` runs TensorFlow 1.x graph-mode programs.

import numpy as np, tensorweave as tf
x = tf.placeholder(tf.float32, [None, 4], name="x")
y = x * 2.0 + 1.0
with tf.Session() as sess:
    print(sess.run(y, {x: np.ones((1, 4), np.float32)}))
"""

import importlib as _importlib
import pkgutil as _pkgutil
import sys as _sys
import types as _types

from tensorweave import errors  # noqa: F401
from tensorweave import ops as _ops_package
from tensorweave.client.session import InteractiveSession, Session  # noqa: F401
from tensorweave.framework import api_export as _api_export
from tensorweave.framework import dtypes  # noqa: F401
from tensorweave.framework import missing_names as _missing_names
from tensorweave.framework.dtypes import (  # noqa: F401
    DType,
    as_dtype,
    bfloat16,
    bool,
    complex64,
    complex128,
    double,
    float16,
    float32,
    float32_ref,
    float64,
    float64_ref,
    half,
    int8,
    int16,
    int32,
    int32_ref,
    int64,
    int64_ref,
    qint8,
    qint16,
    qint32,
    quint8,
    quint16,
    resource,
    string,
    uint8,
    uint16,
    uint32,
    uint64,
    variant,
)
from tensorweave.framework.gradient_registry import (  # noqa: F401
    NoGradient,
    NotDifferentiable,
    RegisterGradient,
)
from tensorweave.framework.importer import import_graph_def  # noqa: F401
from tensorweave.framework.ops import (  # noqa: F401
    Graph,
    GraphKeys,
    Operation,
    Tensor,
    add_to_collection,
    add_to_collections,
    colocate_with,
    container,
    control_dependencies,
    convert_to_tensor,
    device,
    get_collection,
    get_collection_ref,
    get_default_graph,
    get_default_session,
    name_scope,
    register_tensor_conversion_function,
    reset_default_graph,
)
from tensorweave.framework.tensor_shape import Dimension, TensorShape  # noqa: F401
from tensorweave.ops.array_ops import cast as _cast

# Importing every module of tensorweave.ops declares their public names
# (framework/api_export.py: @tf_export at each definition) and registers the
# gradients of the *_grad modules; tf.<name> is then each name declared
# without a namespace. Adding an op family therefore never edits this file.
for _info in sorted(_pkgutil.iter_modules(_ops_package.__path__), key=lambda m: m.name):
    _importlib.import_module(f"tensorweave.ops.{_info.name}")
globals().update(_api_export.exported_names())

# Namespaces (tf.nn, tf.train, tf.layers, ...) are modules of this package;
# tf.math and tf.nn fill themselves from the same declarations.
_API_NAMESPACES = (
    "nn",
    "train",
    "layers",
    "losses",
    "initializers",
    "random",
    "math",
    "linalg",
    "debugging",
    "strings",
    "image",
    "metrics",
    "bitwise",
    "summary",
    "io",
    "python_io",
    "saved_model",
    "contrib",
)
for _namespace in _API_NAMESPACES:
    globals()[_namespace] = _importlib.import_module(f"tensorweave.{_namespace}")

from tensorweave.proto.attr_value_pb2 import AttrValue, NameAttrList  # noqa: F401
from tensorweave.proto.config_pb2 import (  # noqa: F401
    ConfigProto,
    GraphOptions,
    OptimizerOptions,
    RunMetadata,
    RunOptions,
)
from tensorweave.proto.event_pb2 import Event, LogMessage, SessionLog  # noqa: F401
from tensorweave.proto.graph_pb2 import GraphDef  # noqa: F401
from tensorweave.proto.meta_graph_pb2 import MetaGraphDef, TensorInfo  # noqa: F401
from tensorweave.proto.node_def_pb2 import NodeDef  # noqa: F401
from tensorweave.proto.rewriter_config_pb2 import RewriterConfig  # noqa: F401
from tensorweave.proto.summary_pb2 import (  # noqa: F401
    HistogramProto,
    Summary,
    SummaryDescription,
    SummaryMetadata,
)

__version__ = VERSION = "0.1.0"


def to_float(x, name="ToFloat"):
    return _cast(x, float32, name=name)


def to_double(x, name="ToDouble"):
    return _cast(x, float64, name=name)


def to_int32(x, name="ToInt32"):
    return _cast(x, int32, name=name)


def to_int64(x, name="ToInt64"):
    return _cast(x, int64, name=name)


def disable_eager_execution():
    """Graph mode is the only mode: nothing to disable."""


def disable_v2_behavior():
    """TensorFlow 1.x behaviour is the only behaviour: nothing to disable."""


# tf.compat.v1 is this module, so `tf.compat.v1.Session` and
# `import tensorweave.compat.v1 as tf` both work.
compat = _types.ModuleType("tensorweave.compat", "TensorFlow's compat namespace.")
compat.v1 = _sys.modules[__name__]
_sys.modules["tensorweave.compat"] = compat
_sys.modules["tensorweave.compat.v1"] = compat.v1

# A public name tensorweave lacks raises an AttributeError that says so
# (framework/missing_names.py); hasattr(tf, name) keeps working.
__getattr__ = _missing_names.module_getattr(__name__)
compat.__getattr__ = _missing_names.module_getattr(compat.__name__)
