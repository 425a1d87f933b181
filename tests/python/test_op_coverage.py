"""Every op the runtime registers has a gradient (or an explicit
NotDifferentiable) and a Python wrapper reachable from the public API, so an
op added without them fails here rather than in a user's tf.gradients call.

The op list comes from the runtime (TF_GetAllOpList). Internal ops (names
starting with "_": _Arg, _Retval, _Send, _Recv, ...) belong to the executor
and are skipped. The few ops that cannot meet a rule are listed below with
the reason; an exception that is no longer needed is itself a failure.

"Reachable from the public API" is read from the source: starting from every
public name of tf and its namespaces (tf.nn, tf.train, ...), the methods of
public classes and the registered gradient functions (which tf.gradients
calls), the test follows the functions each one calls and collects the op
type names passed as string arguments to calls (make_op("MatMul", ...),
binary("Add", ...)) or captured by closures of generated wrappers.
"""

import ast
import inspect
import textwrap
import types

import pytest
import tensorweave as tf
from tensorweave import pywrap_tensorweave
from tensorweave.framework import gradient_registry
from tensorweave.proto import op_def_pb2

_STACK_OPS_HAVE_NO_WRAPPER = (
    "TensorFlow has no public wrapper either (only gen_data_flow_ops); the while-loop "
    "gradient builds StackV2, StackPushV2 and StackPopV2 but never closes its stacks "
    "(they die with their step), as TensorFlow's"
)

_FUNCTIONS_RUN_FROM_GRAPHDEFS = (
    "calls of a GraphDef's function library and functional control flow run from GraphDefs "
    "TensorFlow 2.x wrote (issue 9 part 6); building them in Python (tf.function) and their "
    "gradients are a later piece"
)
_FUNCTIONAL_OPS = (
    "Case",
    "If",
    "PartitionedCall",
    "StatefulPartitionedCall",
    "StatelessCase",
    "StatelessIf",
    "StatelessWhile",
    "While",
)

# Ops the gradient rule cannot hold for yet, with the reason.
NO_GRADIENT_YET = {
    **dict.fromkeys(_FUNCTIONAL_OPS, _FUNCTIONS_RUN_FROM_GRAPHDEFS),
    # Image resize and crop gradients (helper IMGR).
    **dict.fromkeys(
        (
            "ResizeNearestNeighborGrad",
            "ResizeBicubicGrad",
            "CropAndResizeGradImage",
            "CropAndResizeGradBoxes",
        ),
        "TensorFlow defines no gradient for it either (image_grad.py): a second derivative "
        "through an image resize or crop raises LookupError in both; NotDifferentiable would "
        "silently give zero",
    ),
    "ResizeArea": "TensorFlow defines no gradient for it (image_grad.py): tf.gradients through "
    "tf.image.resize_area raises LookupError in both",
    # Image colour ops (IMGC).
    **dict.fromkeys(
        ("AdjustContrastv2", "AdjustSaturation", "AdjustHue"),
        "TensorFlow 2.21 registers no gradient for it (tf.gradients raises LookupError there); "
        "NotDifferentiable would silently give zeros",
    ),
    # MISC (issue 10): LRN.
    "LRNGrad": "TensorFlow registers no gradient for LRNGrad either (a second derivative "
    "through tf.nn.lrn is a LookupError there); NotDifferentiable would silently give zero",
    "MaxPoolGradWithArgmax": "TensorFlow defines no gradient for it either (nn_grad.py; its "
    "MaxPoolGradGradWithArgmax op has no CPU kernel): tf.gradients through it raises "
    "LookupError in both; NotDifferentiable would silently give zero",
}

# Ops with no public wrapper, with the reason.
NO_WRAPPER = {
    **dict.fromkeys(_FUNCTIONAL_OPS, _FUNCTIONS_RUN_FROM_GRAPHDEFS),
    "StackCloseV2": _STACK_OPS_HAVE_NO_WRAPPER,
    "ConcatOffset": "TensorFlow's gradient of ConcatV2 builds it (ours slices with the inputs' "
    "shapes); the runtime registers it for GraphDefs holding TensorFlow's gradients",
    "TensorArrayGradWithShape": "TensorFlow's Python never builds it (tf.TensorArray.grad "
    "builds TensorArrayGradV3); the runtime registers it for GraphDefs written by TensorFlow",
    "Div": "TensorFlow exposes Div only as tf.raw_ops.Div: tf.div is Python 2 division "
    "(FloorDiv for integers, RealDiv for floats) and tf.divide true division; the runtime "
    "registers Div for GraphDefs written by TensorFlow",
    "Inv": "TensorFlow exposes Inv only as tf.raw_ops.Inv (tf.reciprocal builds Reciprocal); "
    "the runtime registers it for GraphDefs written by TensorFlow",
    "ClipByValue": "TensorFlow 2.21's tf.clip_by_value builds Minimum and Maximum (so does "
    "ours); the op is only tf.raw_ops.ClipByValue, registered for GraphDefs that contain it",
    "Mod": "TensorFlow exposes Mod only as tf.raw_ops.Mod (tf.mod is FloorMod, tf.truncatemod "
    "builds TruncateMod); the runtime registers it for GraphDefs written by TensorFlow",
    **dict.fromkeys(
        ("PreventGradient", "Snapshot"),
        "internal to TensorFlow's Python (gen_array_ops, no tf.* name); the runtime registers "
        "it for GraphDefs written by TensorFlow",
    ),
    **dict.fromkeys(
        ("TopK", "InTopK"),
        "TensorFlow 2.x's Python builds only TopKV2 and InTopKV2 (tf.nn.top_k, tf.nn.in_top_k); "
        "the runtime registers the versions with k as an attr for GraphDefs written by "
        "TensorFlow 1.x",
    ),
    "Snapshot": "TensorFlow exposes Snapshot only as tf.raw_ops.Snapshot (its graph optimizer "
    "inserts it); the runtime registers it for GraphDefs written by TensorFlow",
    "DestroyResourceOp": "TensorFlow's Python builds it only in eager mode (a resource "
    "variable's deleter), never in a graph; the runtime registers it for GraphDefs written by "
    "TensorFlow",
    "DisableCopyOnRead": "TensorFlow's Python emits it only inside its savers' and tf.function's "
    "generated graphs (gen_resource_variable_ops); the runtime registers it so those graphs import",
    "PopulationCount": "TensorFlow exposes it only as tf.raw_ops.PopulationCount; the runtime "
    "registers it for GraphDefs written by TensorFlow",
    **dict.fromkeys(
        ("FusedBatchNorm", "FusedBatchNormV2"),
        "TensorFlow 2.x's Python builds only FusedBatchNormV3 (tf.nn.fused_batch_norm); the "
        "runtime registers the older versions for GraphDefs written by TensorFlow 1.x",
    ),
}

# Random ops (helper RNG).
NO_WRAPPER.update(
    dict.fromkeys(
        (
            "StatelessRandomUniform",
            "StatelessRandomNormal",
            "StatelessTruncatedNormal",
            "StatelessRandomUniformInt",
            "StatelessRandomUniformFullInt",
            "StatelessRandomGetKeyCounterAlg",
            "StatelessRandomGetAlg",
            "StatelessRandomGammaV2",
        ),
        "TensorFlow 2.21's tf.random.stateless_* build StatelessRandomGetKeyCounter and the V2 "
        "ops (so do ours); the runtime registers the V1 forms, GetKeyCounterAlg and GetAlg for "
        "GraphDefs written by TensorFlow (1.x, tf.function, Keras initializers)",
    )
)
NO_GRADIENT_YET.update(
    dict.fromkeys(
        ("RandomGamma", "StatelessRandomGammaV2", "StatelessRandomGammaV3"),
        "TensorFlow differentiates the draws with respect to alpha through RandomGammaGrad "
        "(the derivative of the Gamma CDF's inverse), a kernel the runtime does not have yet",
    )
)

# Checkpoint ops (helper CKPT).
NO_WRAPPER["ShardedFilespec"] = (
    "TensorFlow's Python builds it only for sharded saves in the V1 checkpoint format "
    "(gen_io_ops, no tf.* name); the runtime registers it for GraphDefs written by TensorFlow"
)


def registered_ops():
    """{name: OpDef} of every non-internal op the runtime registers."""
    op_list = op_def_pb2.OpList.FromString(pywrap_tensorweave.TF_GetAllOpList())
    return {op.name: op for op in op_list.op if not op.name.startswith("_")}


def public_roots():
    """The public objects of tf and of its namespace modules."""
    roots = []
    namespaces = [tf] + [getattr(tf, name) for name in tf._API_NAMESPACES]
    namespaces.append(tf.contrib.memory_stats)  # contrib's namespaces are its modules
    for namespace in namespaces:
        for name in dir(namespace):
            if not name.startswith("_"):
                value = getattr(namespace, name)
                if not isinstance(value, types.ModuleType):
                    roots.append(value)
    return roots


def _in_package(value):
    module = getattr(value, "__module__", None) or ""
    return module == "tensorweave" or module.startswith("tensorweave.") or module == __name__


def _callees_and_op_names(function, op_names):
    """(objects `function` refers to, op names it passes to calls)."""
    found_ops, referenced = set(), []
    closure = getattr(function, "__closure__", None) or ()
    for cell in closure:
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if isinstance(value, str) and value in op_names:
            found_ops.add(value)
        elif callable(value):
            referenced.append(value)
    try:
        source = textwrap.dedent(inspect.getsource(function))
    except (OSError, TypeError):
        return referenced, found_ops
    tree = ast.parse(source)
    definition = tree.body[0]
    # The body only: decorators such as RegisterGradient("Relu") name the op
    # a gradient belongs to, not one the function creates.
    body = definition.body if hasattr(definition, "body") else [definition]
    namespace = dict(getattr(function, "__globals__", {}))
    owner = _owning_class(function)
    for node in (n for statement in body for n in ast.walk(statement)):
        if isinstance(node, ast.Call):
            arguments = list(node.args) + [keyword.value for keyword in node.keywords]
            for argument in arguments:
                if isinstance(argument, ast.Constant) and argument.value in op_names:
                    found_ops.add(argument.value)
        elif isinstance(node, ast.Name) and node.id in namespace:
            referenced.append(namespace[node.id])
        elif isinstance(node, ast.Attribute):
            base = node.value
            if isinstance(base, ast.Name) and base.id in ("self", "cls") and owner is not None:
                referenced.append(getattr(owner, node.attr, None))
            elif isinstance(base, ast.Name) and base.id in namespace:
                referenced.append(getattr(namespace[base.id], node.attr, None))
    return referenced, found_ops


def _owning_class(function):
    """The class a method is defined in, from its qualified name."""
    module = inspect.getmodule(function)
    parts = getattr(function, "__qualname__", "").split(".")
    if module is None or len(parts) < 2 or "<locals>" in parts:
        return None
    owner = module
    for part in parts[:-1]:
        owner = getattr(owner, part, None)
    return owner if isinstance(owner, type) else None


def ops_reachable_from(roots, op_names):
    """The op names some function reachable from `roots` creates."""
    seen, found, pending = set(), set(), list(roots)
    while pending:
        value = pending.pop()
        if isinstance(value, property):
            pending.extend(f for f in (value.fget, value.fset) if f is not None)
            continue
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        if not _in_package(value) or id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, type):
            for klass in value.__mro__:
                if _in_package(klass):
                    pending.extend(vars(klass).values())
        elif callable(value):
            referenced, ops_of_value = _callees_and_op_names(value, op_names)
            found |= ops_of_value
            pending.extend(r for r in referenced if r is not None)
    return found


def gradient_functions():
    return [f for f in gradient_registry._registry.values() if f is not None]


def test_the_op_list_comes_from_the_runtime():
    ops = registered_ops()
    assert {"MatMul", "Placeholder", "Conv2D", "ApplyGradientDescent"} <= set(ops)
    matmul = ops["MatMul"]
    assert [arg.name for arg in matmul.input_arg] == ["a", "b"]
    assert {attr.name for attr in matmul.attr} >= {"T", "transpose_a", "transpose_b"}


def test_every_op_has_a_gradient_or_is_not_differentiable():
    missing = sorted(
        name
        for name in registered_ops()
        if not gradient_registry.has_gradient(name) and name not in NO_GRADIENT_YET
    )
    assert not missing, (
        f"ops with neither a gradient (tf.RegisterGradient) nor tf.NotDifferentiable: {missing}"
    )


def test_every_op_has_a_public_wrapper():
    ops = registered_ops()
    reachable = ops_reachable_from(public_roots() + gradient_functions(), set(ops))
    missing = sorted(name for name in ops if name not in reachable and name not in NO_WRAPPER)
    assert not missing, f"ops no public function or gradient creates: {missing}"


@pytest.mark.parametrize(
    "exceptions, still_needed",
    [
        (NO_GRADIENT_YET, lambda name: not gradient_registry.has_gradient(name)),
        (NO_WRAPPER, None),
    ],
    ids=["gradient", "wrapper"],
)
def test_every_exception_is_a_registered_op_still_excepted(exceptions, still_needed):
    ops = registered_ops()
    assert set(exceptions) <= set(ops), sorted(set(exceptions) - set(ops))
    if still_needed is None:
        reachable = ops_reachable_from(public_roots() + gradient_functions(), set(ops))
        still_needed = lambda name: name not in reachable
    stale = sorted(name for name in exceptions if not still_needed(name))
    assert not stale, f"exceptions no longer needed (remove them): {stale}"


def test_the_reachability_walk_finds_what_it_should_and_nothing_else():
    # Guards the walk itself: a wrapper that creates an op is found through
    # a public name; a private function that nothing public calls is not.
    def private_only():
        return tf.get_default_graph().create_op("Sqrt", [], name="x")

    def public(x):
        return _helper("Rsqrt", x)

    def _helper(op_type, x):
        return op_type

    names = {"Sqrt", "Rsqrt"}
    assert ops_reachable_from([public], names) == {"Rsqrt"}
    assert ops_reachable_from([], names) == set()
    assert ops_reachable_from([private_only], names) == {"Sqrt"}
