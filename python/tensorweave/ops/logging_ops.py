"""tf.Assert, tf.Print, tf.print and tf.strings.format.

    check = tf.Assert(tf.reduce_all(x > 0), ["x must be positive:", x])
    report = tf.print("step", step, {"loss": loss}, output_stream=sys.stdout)
    with tf.control_dependencies([check, report]):
        train_op = ...

tf.print formats its arguments as TensorFlow does: Python values and the
structure around tensors through pprint, each tensor summarized (the first
and last `summarize` entries of every dimension) by a StringFormat op; a
PrintV2 op writes the result. Like every op without outputs in a graph, it
runs only when fetched or made a control dependency.
"""

import collections
import logging
import pprint
import random
import sys

from tensorweave.framework import dtypes, ops
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.gradient_registry import NotDifferentiable, RegisterGradient
from tensorweave.ops.op_builder import is_tensor_like, make_op
from tensorweave.proto import attr_value_pb2


def _type_list(types):
    """A list(type) attr, set even when empty."""
    attr = attr_value_pb2.AttrValue()
    attr.list.SetInParent()
    attr.list.type.extend(t.base_dtype.as_datatype_enum for t in types)
    return attr


@tf_export("debugging.Assert", "Assert")
def Assert(condition, data, summarize=None, name=None):
    """An op that fails the run with InvalidArgumentError ("assertion
    failed: [..] [..]", the first `summarize` (default 3) entries of each of
    `data`) when the scalar bool `condition` is false.

    TensorFlow 1.x guards the op with a tf.cond when some data are neither
    int32 nor string (to keep them off accelerators); on CPU the plain op
    behaves the same, so it is always the plain op here.
    """
    with ops.name_scope(name, "Assert", [condition, data]):
        condition = ops.convert_to_tensor(condition, dtype=dtypes.bool, name="Condition")
        xs = ops.convert_n_to_tensor(data)
        attrs = {"T": _type_list(x.dtype for x in xs)}
        if summarize is not None:
            attrs["summarize"] = summarize
        return make_op("Assert", [condition, xs], attrs, "Assert")


@tf_export("Print")
def Print(input_, data, message=None, first_n=None, summarize=None, name=None):
    """Returns `input_` unchanged and, each time it runs (only the first
    `first_n` times when given), writes `message` and the first `summarize`
    (default 3) entries of each of `data` to stderr."""
    with ops.name_scope(name, "Print", [input_, data]) as scope:
        input_ = ops.convert_to_tensor(input_, name="input")
        xs = ops.convert_n_to_tensor(data)
        attrs = {"T": input_.dtype.base_dtype, "U": _type_list(x.dtype for x in xs)}
        if message is not None:
            attrs["message"] = message
        if first_n is not None:
            attrs["first_n"] = first_n
        if summarize is not None:
            attrs["summarize"] = summarize
        return make_op("Print", [input_, xs], attrs, scope)


@RegisterGradient("Print")
def _print_grad(op, *grads):
    """Print is the identity on its first input; data get no gradient."""
    return list(grads) + [None] * (len(op.inputs) - 1)


# Assert has no outputs (TensorFlow registers it not differentiable);
# PrintV2 has none either and StringFormat's is a string.
NotDifferentiable("Assert")
NotDifferentiable("PrintV2")
NotDifferentiable("StringFormat")


@tf_export("strings.format")
def string_format(template, inputs, placeholder="{}", summarize=3, name=None):
    """A scalar string: `template` with each `placeholder` replaced by the
    next of `inputs` (one tensor needs no list), each summarized with the
    first and last `summarize` entries of every dimension (-1: all)."""
    if is_tensor_like(inputs):  # a Tensor or a Variable
        inputs = [inputs]
    if template.count(placeholder) != len(inputs):
        raise ValueError(
            f"The template expects {template.count(placeholder)} tensors, but the inputs "
            f"only has {len(inputs)}. Please ensure the number of placeholders in template "
            "matches inputs length."
        )
    with ops.name_scope(name, "StringFormat", inputs) as scope:
        xs = ops.convert_n_to_tensor(inputs)
        attrs = {
            "T": _type_list(x.dtype for x in xs),
            "template": template,
            "placeholder": placeholder,
            "summarize": summarize,
        }
        return make_op("StringFormat", [xs], attrs, scope)


# --- tf.print's structures: TensorFlow's nest rules, enough for printing ---
# (dicts flatten in sorted key order, OrderedDicts, lists, tuples and
# namedtuples in order, anything else is a leaf).


def _sorted_keys(mapping):
    if isinstance(mapping, collections.OrderedDict):
        return list(mapping)
    try:
        return sorted(mapping)
    except TypeError:
        raise TypeError("nest only supports dicts with sortable keys.") from None


def _flatten(structure):
    if isinstance(structure, dict):
        return [leaf for key in _sorted_keys(structure) for leaf in _flatten(structure[key])]
    if isinstance(structure, (list, tuple)):
        return [leaf for item in structure for leaf in _flatten(item)]
    return [structure]


def _pack(structure, leaves):
    """`structure` rebuilt with its leaves taken, in order, from the iterator `leaves`."""
    if isinstance(structure, dict):
        packed = {key: _pack(structure[key], leaves) for key in _sorted_keys(structure)}
        return type(structure)((key, packed[key]) for key in structure)
    if isinstance(structure, (list, tuple)):
        items = [_pack(item, leaves) for item in structure]
        if hasattr(structure, "_fields"):  # a namedtuple
            return type(structure)(*items)
        return type(structure)(items)
    return next(leaves)


def _map_leaves(function, structure):
    return _pack(structure, iter([function(leaf) for leaf in _flatten(structure)]))


def _placeholder_not_in(text, default="{}"):
    """A placeholder that `text` does not contain (TensorFlow's choice: "{}"
    grown by seeded random digits)."""
    placeholder = default
    rng = random.Random(5)
    while placeholder in text:
        placeholder += str(rng.randint(0, 9))
    return placeholder


def _output_stream_name(output_stream):
    if isinstance(output_stream, str) and output_stream.startswith("file://"):
        return output_stream
    streams = {
        sys.stdout: "stdout",
        sys.stderr: "stderr",
        logging.INFO: "log(info)",
        logging.info: "log(info)",
        logging.WARNING: "log(warning)",
        logging.warning: "log(warning)",
        logging.warn: "log(warning)",
        logging.ERROR: "log(error)",
        logging.error: "log(error)",
    }
    try:
        name = streams.get(output_stream)
    except TypeError:  # an unhashable object
        name = None
    if not name:
        raise ValueError(
            "Unsupported output stream, logging level, or file."
            + str(output_stream)
            + ". Supported streams are sys.stdout, sys.stderr, tf.logging.info, "
            "tf.logging.warning, tf.logging.error. File needs to be in the form of "
            "'file://<filepath>'."
        )
    return name


@tf_export("print")
def print_v2(*inputs, **kwargs):
    """Prints `inputs` (tensors, Python values, and lists, tuples and dicts
    holding them), separated by `sep` and followed by `end`, to
    `output_stream` (sys.stderr, sys.stdout, a logging level or function,
    or "file://<path>"); returns the PrintV2 op.

    Keyword arguments: output_stream=sys.stderr, summarize=3 (entries at
    each end of every dimension; -1 for all), sep=" ", end="\\n", name=None.
    """
    output_stream = kwargs.pop("output_stream", sys.stderr)
    name = kwargs.pop("name", None)
    summarize = kwargs.pop("summarize", 3)
    sep = kwargs.pop("sep", " ")
    end = kwargs.pop("end", "\n")
    if kwargs:
        raise ValueError(f"Unrecognized keyword arguments for tf.print: {kwargs}")
    stream = _output_stream_name(output_stream)

    first = inputs[0] if len(inputs) == 1 else None
    if (
        isinstance(first, ops.Tensor)
        and first.dtype == dtypes.string
        and first.get_shape().ndims == 0
    ):
        formatted = first  # one scalar string: nothing to format
    else:
        # The placeholder is chosen from the text without tensors, with
        # OrderedDicts sorted (TensorFlow's choice; it only matters when a
        # printed value contains "{}").
        sorted_inputs = [
            collections.OrderedDict(sorted(x.items()))
            if isinstance(x, collections.OrderedDict)
            else x
            for x in inputs
        ]
        tensor_free = _map_leaves(lambda x: "" if is_tensor_like(x) else x, sorted_inputs)
        placeholder = _placeholder_not_in(" ".join(pprint.pformat(x) for x in tensor_free))
        templates, tensors = [], []
        for value in inputs:
            slots = []
            for leaf in _flatten(value):
                if is_tensor_like(leaf):  # Tensors and Variables
                    tensors.append(ops.convert_to_tensor(leaf))
                    slots.append(placeholder)
                else:
                    slots.append(leaf)
            if isinstance(value, str):
                templates.append(value)  # a string is its own template
            else:
                templates.append(pprint.pformat(_pack(value, iter(slots))))
        # pprint quotes the placeholder strings inside structures; tensors
        # print unquoted.
        template = sep.join(templates).replace("'" + placeholder + "'", placeholder)
        formatted = string_format(
            template,
            tensors,
            placeholder=placeholder,
            summarize=summarize,
            name=name + "_format" if name else None,
        )
    with ops.name_scope(name, "PrintV2", [formatted]) as scope:
        return make_op("PrintV2", [formatted], {"output_stream": stream, "end": end}, scope)
