"""tf.train.Saver: saves variables to checkpoint files and restores them.

    saver = tf.train.Saver(max_to_keep=3)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, "ckpt/model", global_step=100)   # "ckpt/model-100"
    with tf.Session() as sess:
        saver.restore(sess, tf.train.latest_checkpoint("ckpt"))

The Saver adds its ops to the graph once, at construction, under a "save" name
scope (as TensorFlow does): a string placeholder `save/filename`, `save/SaveV2`
fed the variables' values, `save/RestoreV2` and one `save/Assign` per variable
grouped into `save/restore_all`. A checkpoint is TensorFlow's V2 format
(`<prefix>.index` and `<prefix>.data-00000-of-00001`, docs/checkpoint_format.md),
so TensorFlow restores it and the reverse; its files are replaced atomically.
With sharded=True each device's variables go to their own data file: one
SaveV2 per device under a temporary prefix, then MergeV2Checkpoints. Restoring
also reads tensorweave's older `<prefix>.twckpt` files.

Restoring is all or nothing: the checkpoint is read completely and every
tensor's dtype and shape checked against its variable before any variable is
assigned, and then all are assigned in one run. A missing, damaged or
mismatched checkpoint therefore raises and leaves every variable as it was.
"""

import collections
import numbers
import os
import time

import numpy as np

from tensorweave.framework import dtypes, errors, ops, tensor_shape, tensor_util
from tensorweave.framework.gradient_registry import NotDifferentiable
from tensorweave.ops import (
    array_ops,
    constant_op,
    control_flow_ops,
    math_ops,
    resource_variable_ops,
    state_ops,
    variables,
)
from tensorweave.proto.saver_pb2 import SaverDef
from tensorweave.train import checkpoint_management, meta_graph

__all__ = [
    "Saver",
    "SaverDef",
]

# Sharded saves' ops: file names in, files out, nothing to differentiate
# (SaveV2 and RestoreV2 are declared with the state ops, ops/state_grad.py).
for _op_type in ("MergeV2Checkpoints", "ShardedFilename", "ShardedFilespec"):
    NotDifferentiable(_op_type)


def _variable_ref(value):
    """The VariableV2 output behind a Variable or a ref tensor, else None. A
    resource variable stands for itself: it has the dtype, shape and op name
    (the checkpoint key) a ref has, identity() reads it and assign() sets
    it, so both kinds save and restore under the same names."""
    if isinstance(value, resource_variable_ops.ResourceVariable):
        return value
    if isinstance(value, variables.Variable):
        return value._ref()
    if isinstance(value, ops.Tensor) and value.op.type == "VariableV2":
        return value
    return None


class _ImportedResourceVariable:
    """An imported restore op's resource variable, as restore() needs it: its
    VarHandleOp (whose name is the variable's) and the shape it declares."""

    def __init__(self, handle):
        self.op = handle.op
        self.shape = tensor_shape.as_shape(handle.op.get_attr("shape"))


def _assigned_variable(target):
    """What an imported Assign or AssignVariableOp sets: a ref tensor as is, a
    resource handle as the variable it names."""
    if target.dtype.base_dtype == dtypes.resource:
        return _ImportedResourceVariable(target)
    return target


def _restore_ops_behind(restore_op):
    """The RestoreV2 ops that running `restore_op` runs (through its inputs
    and control inputs), by name."""
    found, seen, pending = {}, {restore_op}, [restore_op]
    while pending:
        op = pending.pop()
        if op.type == "RestoreV2":
            found[op.name] = op
            continue  # what a RestoreV2 reads is the file name, nothing to restore
        for before in [tensor.op for tensor in op.inputs] + list(op.control_inputs):
            if before not in seen:
                seen.add(before)
                pending.append(before)
    return [found[name] for name in sorted(found)]


def _restored_keys(restore):
    """A RestoreV2's checkpoint keys (its constant tensor_names input); the
    output names when they are computed, for messages only."""
    names = restore.inputs[1].op
    if names.type == "Const":
        keys = [key.decode() for key in tensor_util.make_ndarray(names.get_attr("value")).flat]
        if len(keys) != len(restore.outputs):
            raise ValueError(
                f"{restore.name} has {len(restore.outputs)} outputs but {len(keys)} tensor names"
            )
        return keys
    return [output.name for output in restore.outputs]


def _variable_restored_from(output):
    """The variable an imported restore op assigns the RestoreV2 output
    `output` to (through Identity ops), or None when it assigns none: its
    value is then read but not checked."""
    seen, pending = set(), [output]
    while pending:
        tensor = pending.pop()
        for consumer in tensor.consumers():
            if consumer in seen:
                continue
            seen.add(consumer)
            if consumer.type in ("Assign", "AssignVariableOp") and consumer.inputs[1] is tensor:
                return _assigned_variable(consumer.inputs[0])
            if consumer.type == "Identity":
                pending.append(consumer.outputs[0])
    return None


def _named_variables(var_list):
    """[(checkpoint key, VariableV2 ref tensor)] sorted by key."""
    if isinstance(var_list, dict):
        items = list(var_list.items())
    else:
        items = []
        for value in var_list:
            ref = _variable_ref(value)
            if ref is None:
                raise TypeError(f"Variable to save is not a Variable: {value!r}")
            items.append((ref.op.name, value))
    named, seen = [], {}
    for key, value in items:
        if not isinstance(key, str) or not key:
            raise TypeError(f"Checkpoint names must be non-empty strings, got {key!r}")
        ref = _variable_ref(value)
        if ref is None:
            raise TypeError(f"Variable to save is not a Variable: {value!r}")
        if key in seen:
            raise ValueError(f"At least two variables have the same name: {key}")
        seen[key] = ref
        named.append((key, ref))
    return sorted(named, key=lambda item: item[0])


class Saver:
    """Saves and restores variables (TensorFlow 1.x's tf.train.Saver)."""

    def __init__(
        self,
        var_list=None,
        reshape=False,
        sharded=False,
        max_to_keep=5,
        keep_checkpoint_every_n_hours=10000.0,
        name=None,
        restore_sequentially=False,
        saver_def=None,
        builder=None,
        defer_build=False,
        allow_empty=False,
        write_version=2,
        pad_step_number=False,
        save_relative_paths=False,
        filename=None,
    ):
        # restore_sequentially chooses between TensorFlow's implementations;
        # ours has one (every value read before any is assigned).
        if builder is not None:
            raise NotImplementedError("Saver(builder=...) is not supported")
        if saver_def is not None:
            self._init_from_saver_def(saver_def)
            return
        if write_version != SaverDef.V2:
            raise ValueError(
                f"write_version={write_version} is not supported: tensorweave writes "
                "TensorFlow's V2 format (SaverDef.V2), which TensorFlow reads too"
            )
        self._sharded = bool(sharded)
        self._var_list = var_list
        self._reshape = reshape
        self._name = name
        self._pad_step_number = pad_step_number
        self._save_relative_paths = save_relative_paths
        self._default_filename = filename
        self._allow_empty = allow_empty
        self._built = False
        self._is_empty = False
        self._init_bookkeeping(max_to_keep, keep_checkpoint_every_n_hours)
        if not defer_build:
            self.build()

    def _init_bookkeeping(self, max_to_keep, keep_checkpoint_every_n_hours):
        self._max_to_keep = max_to_keep
        self._keep_every_seconds = keep_checkpoint_every_n_hours * 3600.0
        self._last_checkpoints = []  # [(prefix, time saved)], oldest first
        self._next_keep_time = time.time() + self._keep_every_seconds
        self._last_preserved_timestamp = time.time()

    def _init_from_saver_def(self, saver_def):
        """Saver(saver_def=...): a Saver over the ops of the default graph a
        SaverDef names (as TensorFlow, the names are used as they are)."""
        if not isinstance(saver_def, SaverDef):
            raise ValueError(  # noqa: TRY004 (TensorFlow raises ValueError here)
                f"saver_def must be a saver_pb2.SaverDef: {saver_def!r}"
            )
        for field in ("filename_tensor_name", "save_tensor_name", "restore_op_name"):
            if not getattr(saver_def, field):
                raise ValueError(f"saver_def must specify the {field}: {saver_def}")
        graph = ops.get_default_graph()
        self._init_over_graph(
            graph,
            graph.get_tensor_by_name(saver_def.filename_tensor_name),
            graph.get_tensor_by_name(saver_def.save_tensor_name),
            graph.get_operation_by_name(saver_def.restore_op_name),
            saver_def.max_to_keep,
            saver_def.keep_checkpoint_every_n_hours or 10000.0,
        )

    @classmethod
    def _from_graph(cls, graph, filename_tensor, save_tensor, restore_op, *bookkeeping):
        """A Saver over save and restore ops already in `graph` (see
        _init_over_graph); `bookkeeping` is max_to_keep and
        keep_checkpoint_every_n_hours."""
        saver = cls.__new__(cls)
        saver._init_over_graph(graph, filename_tensor, save_tensor, restore_op, *bookkeeping)
        return saver

    def _init_over_graph(
        self,
        graph,
        filename_tensor,
        save_tensor,
        restore_op,
        max_to_keep=5,
        keep_checkpoint_every_n_hours=10000.0,
    ):
        """Takes over save and restore ops already in `graph` (an imported meta
        graph, ours or TensorFlow's). Saving runs `save_tensor` with the
        prefix fed to `filename_tensor`; restoring reads every RestoreV2 op
        `restore_op` depends on (one, or one per device in a sharded saver),
        checks each value against the variable it is assigned to (directly, as
        ours and TensorFlow's Assign do, or through the Identity TensorFlow
        puts before an AssignVariableOp), then runs `restore_op` with the
        values fed, so restoring stays all or nothing."""
        self._sharded = any(op.type == "MergeV2Checkpoints" for op in graph.get_operations())
        self._reshape = False
        self._pad_step_number = False
        self._save_relative_paths = False
        self._built, self._is_empty = True, False
        self._init_bookkeeping(max_to_keep, keep_checkpoint_every_n_hours)
        self._graph = graph
        self._filename_tensor, self._save_tensor = filename_tensor, save_tensor
        self._restore_op = restore_op
        restores = _restore_ops_behind(restore_op)
        if not restores:
            raise ValueError(f"{restore_op.name} restores nothing: no RestoreV2 op precedes it")
        self._restored, self._variables = [], []
        for restore in restores:
            keys = _restored_keys(restore)
            for output in restore.outputs:
                self._restored.append(output)
                self._variables.append((keys[output.value_index], _variable_restored_from(output)))

    def _op_names(self):
        """The names a SaverDef records: filename tensor, save tensor, restore op."""
        return self._filename_tensor.name, self._save_tensor.name, self._restore_op.name

    @property
    def saver_def(self):
        """The fields of TensorFlow's SaverDef: what a program that only has the
        graph runs to save (feed filename_tensor_name, fetch save_tensor_name)
        or restore (feed it, run restore_op_name)."""
        self.build()
        if self._is_empty:
            return None
        filename, save, restore = self._op_names()
        return SaverDef(
            filename_tensor_name=filename,
            save_tensor_name=save,
            restore_op_name=restore,
            max_to_keep=self._max_to_keep or 0,
            keep_checkpoint_every_n_hours=self._keep_every_seconds / 3600.0,
            sharded=self._sharded,
            version=SaverDef.V2,
        )

    def as_saver_def(self):
        return self.saver_def

    # --- building -------------------------------------------------------------------------

    def build(self):
        """Adds the save and restore ops (once; later calls do nothing)."""
        if self._built:
            return
        var_list = self._var_list
        if var_list is None:
            var_list = variables.global_variables()
        self._variables = _named_variables(var_list)
        self._built = True
        if not self._variables:
            if self._allow_empty:
                self._is_empty = True
                return
            raise ValueError("No variables to save")
        graph = self._variables[0][1].graph
        for key, ref in self._variables:
            if ref.graph is not graph:
                raise ValueError(f"Variable {key} is in a different graph from the others")
        self._graph = graph
        with graph.as_default(), ops.name_scope(self._name, "save"):
            self._build_ops()

    def _build_ops(self):
        keys = [key for key, _ in self._variables]
        refs = [ref for _, ref in self._variables]
        base_dtypes = [ref.dtype.base_dtype for ref in refs]
        self._filename_tensor = array_ops.placeholder_with_default(
            constant_op.constant(self._default_filename or "model", dtype=dtypes.string),
            shape=[],
            name="filename",
        )
        if self._sharded:
            save_op = self._build_sharded_save()
        else:
            save_op = self._build_save(self._filename_tensor, keys, refs)
        with ops.control_dependencies([save_op]):
            # Fetching this runs the save and returns the prefix it wrote.
            self._save_tensor = array_ops.identity(self._filename_tensor, name="control_dependency")
        with ops.name_scope("RestoreV2") as restore_scope:
            names = constant_op.constant(keys, dtype=dtypes.string, name="tensor_names")
            slices = constant_op.constant(
                [""] * len(keys), dtype=dtypes.string, name="shape_and_slices"
            )
            restore_op = self._graph.create_op(
                "RestoreV2",
                [self._filename_tensor, names, slices],
                attrs={"dtypes": base_dtypes},
                name=restore_scope,
            )
        self._restored = list(restore_op.outputs)
        assigns = []
        for ref, restored in zip(refs, self._restored):
            # A variable declared without a full shape takes the stored one.
            validate = ref.shape.is_fully_defined()
            assigns.append(
                state_ops.assign(ref, restored, validate_shape=validate, name="Assign").op
            )
        self._restore_op = control_flow_ops.group(*assigns, name="restore_all")

    def _build_save(self, prefix, keys, refs):
        """A SaveV2 op writing the variables `refs` under `keys` as `prefix`."""
        with ops.name_scope("SaveV2") as save_scope:
            names = constant_op.constant(keys, dtype=dtypes.string, name="tensor_names")
            slices = constant_op.constant(
                [""] * len(keys), dtype=dtypes.string, name="shape_and_slices"
            )
            # The variables' current values (an Identity of each ref).
            values = [array_ops.identity(ref) for ref in refs]
            return self._graph.create_op(
                "SaveV2",
                [prefix, names, slices, values],
                attrs={"dtypes": [ref.dtype.base_dtype for ref in refs]},
                name=save_scope,
            )

    def _build_sharded_save(self):
        """TensorFlow's sharded V2 save: the variables of each device go to
        "<prefix>_temp/part-<shard>-of-<shards>" (a SaveV2 on that device), then
        MergeV2Checkpoints turns the parts into one checkpoint under the
        prefix (one data file per device) and removes the temporary directory."""
        by_device = collections.OrderedDict()
        for key, ref in self._variables:
            by_device.setdefault(ref.device, []).append((key, ref))
        temp_prefix = math_ops.add(
            self._filename_tensor,
            constant_op.constant("_temp/part", dtype=dtypes.string),
            name="StringJoin",
        )
        num_shards = constant_op.constant(len(by_device), dtype=dtypes.int32, name="num_shards")
        shard_prefixes, saves = [], []
        for shard, (device, items) in enumerate(by_device.items()):
            with self._graph.device(device):
                shard_prefix = self._graph.create_op(
                    "ShardedFilename",
                    [temp_prefix, constant_op.constant(shard, dtype=dtypes.int32), num_shards],
                    name="ShardedFilename",
                ).outputs[0]
                saves.append(
                    self._build_save(shard_prefix, [k for k, _ in items], [r for _, r in items])
                )
            shard_prefixes.append(shard_prefix)
        with ops.control_dependencies(saves):
            return self._graph.create_op(
                "MergeV2Checkpoints",
                [array_ops.stack(shard_prefixes), self._filename_tensor],
                attrs={"delete_old_dirs": True},
                name="MergeV2Checkpoints",
            )

    # --- checkpoint bookkeeping ------------------------------------------------------------

    @property
    def last_checkpoints(self):
        """Prefixes of the checkpoints this Saver keeps, oldest first."""
        return [prefix for prefix, _ in self._last_checkpoints]

    def set_last_checkpoints(self, last_checkpoints):
        """Deprecated in TensorFlow; use set_last_checkpoints_with_time."""
        if not isinstance(last_checkpoints, list):
            raise TypeError("last_checkpoints must be a list")
        self._last_checkpoints = [(prefix, np.inf) for prefix in last_checkpoints]

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time):
        if not isinstance(last_checkpoints_with_time, list):
            raise TypeError("last_checkpoints_with_time must be a list")
        self._last_checkpoints = [(p, float(t)) for p, t in last_checkpoints_with_time]

    def recover_last_checkpoints(self, checkpoint_paths):
        """Takes over checkpoints written by an earlier Saver (e.g. those a state
        file lists), using their files' modification times."""
        existing = [p for p in checkpoint_paths if checkpoint_management.checkpoint_exists(p)]
        times = checkpoint_management.get_checkpoint_mtimes(existing)
        self.set_last_checkpoints_with_time(list(zip(existing, times)))

    def _record_checkpoint(self, prefix):
        """Adds `prefix` as the newest checkpoint and returns the prefixes that
        fall beyond max_to_keep (to delete once the state file no longer names
        them), keeping one every keep_checkpoint_every_n_hours."""
        if not self._max_to_keep:
            return []
        self._last_checkpoints = [(p, t) for p, t in self._last_checkpoints if p != prefix]
        self._last_checkpoints.append((prefix, time.time()))
        doomed = []
        while len(self._last_checkpoints) > self._max_to_keep:
            oldest, saved_at = self._last_checkpoints.pop(0)
            if saved_at > self._next_keep_time:
                # Preserved for good: it is no longer tracked, so never deleted.
                self._next_keep_time += self._keep_every_seconds
                self._last_preserved_timestamp = saved_at
            else:
                doomed.append(oldest)
        return doomed

    # --- save and restore -------------------------------------------------------------------

    def save(
        self,
        sess,
        save_path,
        global_step=None,
        latest_filename=None,
        meta_graph_suffix="meta",
        write_meta_graph=True,
        write_state=True,
        strip_default_attrs=False,
        save_debug_info=False,
    ):
        """Writes every variable's value to `save_path` (with "-<global_step>"
        appended when given) and returns that prefix; records it in the state
        file `latest_filename` ("checkpoint") and deletes checkpoints beyond
        max_to_keep. With write_meta_graph, also writes `<prefix>.meta` (a
        MetaGraphDef with the graph and this Saver's op names; see
        tf.train.import_meta_graph)."""
        self.build()
        if self._is_empty:
            return None
        latest_filename = latest_filename or "checkpoint"
        if os.path.split(latest_filename)[0]:
            raise ValueError("'latest_filename' must not contain path components")
        save_path = os.fspath(save_path)
        if global_step is not None:
            if not isinstance(global_step, numbers.Integral):
                global_step = sess.run(global_step)
            step = int(global_step)
            prefix = f"{save_path}-{step:08d}" if self._pad_step_number else f"{save_path}-{step}"
        else:
            prefix = save_path
        save_dir = os.path.dirname(prefix)
        if sess.graph is not self._graph:
            raise ValueError("The session's graph is not the graph this Saver was built in")
        try:
            # SaveV2 creates missing parent directories, as TensorFlow's does.
            written = sess.run(self._save_tensor, {self._filename_tensor: prefix})
        except (errors.NotFoundError, errors.PermissionDeniedError) as error:
            if not os.path.isdir(save_dir or "."):
                raise ValueError(
                    f"Parent directory of {save_path} doesn't exist, can't save: {error.message}"
                ) from error
            raise
        written = written.decode() if isinstance(written, bytes) else str(written)
        if write_meta_graph:
            self._write_meta_graph(f"{written}.{meta_graph_suffix}", strip_default_attrs)
        if write_state:
            doomed = self._record_checkpoint(written)
            kept = self._last_checkpoints or [(written, time.time())]
            # The state file stops naming a checkpoint before its files go.
            checkpoint_management.update_checkpoint_state(
                save_dir,
                written,
                [p for p, _ in kept],
                latest_filename,
                [t if np.isfinite(t) else time.time() for _, t in kept],
                self._last_preserved_timestamp,
                self._save_relative_paths,
            )
            for old in doomed:
                checkpoint_management.remove_checkpoint(old, meta_graph_suffix=meta_graph_suffix)
        return written

    def _write_meta_graph(self, path, strip_default_attrs=False):
        # What TensorFlow's save writes: the graph, this Saver's SaverDef, the
        # OpDefs used and the collections (the variables as VariableDefs, so
        # import_meta_graph gives tf.global_variables() back). Not fsynced
        # (TensorFlow does not either): the graph can be exported again by the
        # program, and each fsync costs milliseconds per save.
        meta_graph_def = meta_graph.export_meta_graph(
            graph=self._graph, saver=self, strip_default_attrs=strip_default_attrs
        )
        checkpoint_management.atomic_write(path, meta_graph_def.SerializeToString(), durable=False)

    def restore(self, sess, save_path):
        """Sets every variable to its value in the checkpoint `save_path` (a
        prefix, as save returns it). Raises NotFoundError for a missing
        checkpoint or variable, DataLossError for a damaged file and
        InvalidArgumentError for a dtype or shape mismatch; on any error no
        variable changes."""
        self.build()
        if self._is_empty:
            return
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        save_path = os.fspath(save_path)
        if sess.graph is not self._graph:
            raise ValueError("The session's graph is not the graph this Saver was built in")
        # 1. Read every tensor; failing here has changed nothing.
        values = sess.run(self._restored, {self._filename_tensor: save_path})
        # 2. Check them all against the variables.
        feeds = {}
        for (key, ref), restored, value in zip(self._variables, self._restored, values):
            feeds[restored] = self._checked_value(save_path, key, ref, np.asarray(value))
        # 3. Assign them all in one run. Feeding every RestoreV2 output prunes
        # the file read away: the values checked are the values assigned.
        sess.run(self._restore_op, feeds)

    def _checked_value(self, save_path, key, ref, value):
        if ref is None:
            return value
        want = ref.shape
        if not want.is_fully_defined() or tuple(want.as_list()) == value.shape:
            return value
        described = key if key == ref.op.name else f"{ref.op.name} (checkpoint key {key})"
        if self._reshape and want.num_elements() == value.size:
            return value.reshape(want.as_list())
        raise errors.InvalidArgumentError(
            None,
            None,
            f"Restoring from checkpoint {save_path} failed: variable {described} has shape "
            f"{tensor_shape.TensorShape(want.as_list())} in the graph but shape "
            f"{tensor_shape.TensorShape(list(value.shape))} in the checkpoint",
        )
