"""Looking inside checkpoints: tf.train.list_variables, load_variable,
load_checkpoint, NewCheckpointReader and init_from_checkpoint, over
TensorFlow's V2 checkpoints and tensorweave's older `.twckpt` files alike.

    for name, shape in tf.train.list_variables("ckpt"):        # the latest checkpoint
        print(name, shape)
    kernel = tf.train.load_variable("ckpt", "mlp/dense/kernel")  # a numpy array

Everything goes through the runtime's checkpoint reader (TF_CheckpointReader
in the C API): opening reads the file's table of contents, checksums
verified; each get_tensor reads one tensor and verifies its checksum. A
damaged file is DataLossError, a missing file or name NotFoundError.
"""

import os

import numpy as np

from tensorweave import pywrap_tensorweave as c_api
from tensorweave.framework import dtypes, ops
from tensorweave.ops import resource_variable_ops, state_ops, variables
from tensorweave.proto import types_pb2
from tensorweave.train import checkpoint_management

__all__ = [
    "NewCheckpointReader",
    "init_from_checkpoint",
    "list_variables",
    "load_checkpoint",
    "load_variable",
]


class _ReaderHandle:
    """Owns one TF_CheckpointReader. A call in progress holds a reference, so
    close() during a read (the GIL is released while it reads) cannot free
    the reader under it: it goes with the last reference."""

    def __init__(self, filename):
        self.reader = c_api.TF_NewCheckpointReader(filename)

    def __del__(self):
        if getattr(self, "reader", None) is not None:
            c_api.TF_DeleteCheckpointReader(self.reader)


class CheckpointReader:
    """Reads the tensors of one checkpoint (made by NewCheckpointReader)."""

    def __init__(self, checkpoint_prefix):
        self._handle = _ReaderHandle(os.fspath(checkpoint_prefix))
        reader = self._handle.reader
        names = [
            c_api.TF_CheckpointReaderGetVariable(reader, i)
            for i in range(c_api.TF_CheckpointReaderSize(reader))
        ]
        self._dtypes = {
            name: dtypes.as_dtype(c_api.TF_CheckpointReaderGetVariableDataType(reader, name))
            for name in names
        }
        self._shapes = {
            name: c_api.TW_CheckpointReaderGetVariableShape(reader, name) for name in names
        }

    def get_variable_to_shape_map(self):
        return {name: list(shape) for name, shape in self._shapes.items()}

    def get_variable_to_dtype_map(self):
        return dict(self._dtypes)

    def has_tensor(self, name):
        return name in self._dtypes

    def get_tensor(self, name):
        """The value stored under `name`, as a numpy array (NotFoundError if absent)."""
        handle = self._handle
        if handle is None:
            raise ValueError("The checkpoint reader has been closed")
        return np.asarray(c_api.TW_CheckpointReaderGetTensor(handle.reader, name))

    def close(self):
        """Closes the file (once no read is in progress). Later reads raise ValueError."""
        self._handle = None

    def debug_string(self):
        """One line per tensor, as TensorFlow's: b"dense/kernel (DT_FLOAT) [2,3]\n"."""
        lines = [
            f"{name} ({types_pb2.DataType.Name(self._dtypes[name].as_datatype_enum)}) "
            f"[{','.join(str(d) for d in self._shapes[name])}]\n"
            for name in sorted(self._dtypes)
        ]
        return "".join(lines).encode()


def NewCheckpointReader(filepattern):
    """A reader of the checkpoint saved under the prefix `filepattern` (or
    the path of its file)."""
    return CheckpointReader(filepattern)


def _resolve(ckpt_dir_or_file):
    """A checkpoint prefix: the latest one of a directory, else the argument."""
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        latest = checkpoint_management.latest_checkpoint(path)
        if latest is None:
            raise ValueError(
                f"Couldn't find 'checkpoint' file or checkpoints in given directory {path}"
            )
        return latest
    return path


def load_checkpoint(ckpt_dir_or_file):
    """A CheckpointReader of a checkpoint prefix, or of a directory's latest checkpoint."""
    return CheckpointReader(_resolve(ckpt_dir_or_file))


def list_variables(ckpt_dir_or_file):
    """[(name, shape)] of every tensor in the checkpoint, sorted by name."""
    reader = load_checkpoint(ckpt_dir_or_file)
    return sorted(reader.get_variable_to_shape_map().items())


def load_variable(ckpt_dir_or_file, name):
    """The value of one tensor of the checkpoint, as a numpy array."""
    name = name.removesuffix(":0")
    reader = load_checkpoint(ckpt_dir_or_file)
    try:
        return reader.get_tensor(name)
    finally:
        reader.close()


def _restore_into(variable, checkpoint_prefix, tensor_name):
    """Makes `variable`'s initializer assign it the checkpoint's `tensor_name`
    (read by a RestoreV2 op named "checkpoint_initializer") instead of its
    initial value, as TensorFlow's init_from_checkpoint does."""
    graph = variable.graph
    base_dtype = variable.dtype.base_dtype
    with graph.as_default(), ops.device(variable.device):
        names = ops.convert_to_tensor([tensor_name], dtype=dtypes.string)
        slices = ops.convert_to_tensor([""], dtype=dtypes.string)
        prefix = ops.convert_to_tensor(checkpoint_prefix, dtype=dtypes.string)
        restored = graph.create_op(
            "RestoreV2",
            [prefix, names, slices],
            attrs={"dtypes": [base_dtype]},
            name="checkpoint_initializer",
        ).outputs[0]
        if isinstance(variable, resource_variable_ops.ResourceVariable):
            initializer = resource_variable_ops.assign_variable_op(variable._handle, restored)
        else:
            initializer = state_ops.assign(
                variable._ref(), restored, validate_shape=variable.shape.is_fully_defined()
            ).op
    variable._initializer_op = initializer
    variable._initial_value = restored


def init_from_checkpoint(ckpt_dir_or_file, assignment_map):
    """Initializes variables from a checkpoint instead of their initial values
    (TensorFlow 1.x's tf.train.init_from_checkpoint). `assignment_map` maps
    checkpoint names to variables or variable names ({"old/w": "new/w"} or
    {"old/w": variable}), or scopes to scopes ({"old_scope/": "new_scope/"},
    {"/": "new_scope/"} for the whole checkpoint): every variable of the
    scope takes the checkpoint tensor of the same name under the other scope.
    Raises ValueError for a name the checkpoint lacks or a shape mismatch;
    the variables change when their initializers run."""
    prefix = _resolve(ckpt_dir_or_file)
    reader = CheckpointReader(prefix)
    shapes = reader.get_variable_to_shape_map()
    reader.close()
    by_name = {v.op.name: v for v in variables.global_variables()}
    for ckpt_name, target in sorted(assignment_map.items(), key=lambda item: item[0]):
        variable = target if isinstance(target, variables.Variable) else by_name.get(target)
        if variable is not None:
            if ckpt_name not in shapes:
                raise ValueError(
                    f"Tensor {ckpt_name} is not found in {ckpt_dir_or_file} checkpoint"
                )
            if not variable.shape.is_compatible_with(shapes[ckpt_name]):
                raise ValueError(
                    f"Shape of variable {variable.op.name} ({variable.shape}) doesn't match "
                    f"with shape of tensor {ckpt_name} ({shapes[ckpt_name]}) from checkpoint "
                    "reader."
                )
            _restore_into(variable, prefix, ckpt_name)
            continue
        if not ckpt_name.endswith("/"):
            raise ValueError(
                f"Assignment map with scope only name {ckpt_name} should map to scope only "
                f"{target}. Should be 'scope/': 'other_scope/'."
            )
        scope = target[: target.rindex("/")] if "/" in target else ""
        for var_name in sorted(by_name):
            if scope and not var_name.startswith(scope + "/"):
                continue
            tensor_name = var_name[len(scope) :]
            if target != "/":
                tensor_name = tensor_name[1:]
            if ckpt_name != "/":
                tensor_name = ckpt_name + tensor_name
            tensor_name = tensor_name.removesuffix("/")
            if tensor_name not in shapes:
                raise ValueError(
                    f"Tensor {tensor_name} ({var_name[len(scope) + 1 :]} in {ckpt_name}) is not "
                    f"found in {ckpt_dir_or_file} checkpoint"
                )
            _restore_into(by_name[var_name], prefix, tensor_name)
