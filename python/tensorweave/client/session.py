"""Session: runs a Graph through a TF_Session (TensorFlow 1.x `tf.Session`).

`run` is the hot path. Everything that depends only on the signature (the
fetch structure and the feed keys) is computed once into a FetchPlan and
cached, and the plan's step is prepared once as a runtime callable, so a
repeated run converts the feed values, makes one C++ call
(TW_SessionRunCallable_wrapper, which releases the GIL while the step runs)
and rebuilds the result structure. `make_callable` hands the same machinery
to the caller as a Python function.
"""

import contextlib

import numpy as np

from tensorweave import _pywrap_tensorweave as _c
from tensorweave import pywrap_tensorweave as c_api
from tensorweave.client import fetch_plan
from tensorweave.framework import errors, ops
from tensorweave.proto import config_pb2

_MAX_CACHED_PLANS = 4096

# Looked up once: run() is the hot path.
_run_callable = _c.TW_SessionRunCallable_wrapper
_run_callable_with_metadata = _c.TW_SessionRunCallableWithMetadata_wrapper
_asarray = np.asarray


def _check_feed_shape(spec, array):
    """Checks a feed against the tensor's static shape and remembers a shape
    that passed, so a repeated feed shape costs one tuple comparison."""
    if not spec.shape.is_compatible_with(array.shape):
        raise ValueError(
            f"Cannot feed value of shape {array.shape!r} for Tensor "
            f"{spec.tensor.name!r}, which has shape {str(spec.shape)!r}"
        )
    spec.accepted_shape = array.shape


def _feed_arrays(feeds, values):
    """The feed values as arrays of their tensors' dtypes, shapes checked."""
    arrays = []
    try:
        for spec, value in zip(feeds, values):
            array = _asarray(value, spec.numpy_dtype)
            if array.shape != spec.accepted_shape:
                _check_feed_shape(spec, array)
            arrays.append(array)
    except NotImplementedError:  # a Tensor's __array__ refuses
        if any(isinstance(value, ops.Tensor) for value in values):
            raise TypeError(
                "The value of a feed cannot be a tf.Tensor object. "
                "Acceptable feed values include Python scalars, strings, "
                "lists, numpy ndarrays, or TensorHandles."
            ) from None
        raise
    return arrays


class _DeviceAttributes:
    def __init__(self, name, device_type, memory_limit_bytes, incarnation=0):
        self.name = name
        self.device_type = device_type
        self.memory_limit_bytes = memory_limit_bytes
        # A random number fixed for the device's life (TensorFlow's too).
        self.incarnation = incarnation

    def __repr__(self):
        return (
            f"_DeviceAttributes({self.name}, {self.device_type}, {self.memory_limit_bytes}, "
            f"{self.incarnation})"
        )


class BaseSession:
    """A session on `graph` (default: the default graph)."""

    def __init__(self, target="", graph=None, config=None):
        self._session = None  # set last, so __del__ after a failed init is harmless
        self._closed = False
        self._graph = ops.get_default_graph() if graph is None else graph
        if not isinstance(self._graph, ops.Graph):
            raise TypeError(f"graph must be a tf.Graph, but got {type(graph)}")
        if config is not None and not isinstance(config, config_pb2.ConfigProto):
            raise TypeError(f"config must be a tf.ConfigProto, but got {type(config)}")
        if isinstance(target, bytes):
            target = target.decode()
        self._target = target
        self._config = config
        self._plans = {}
        # Every callable handle this session made and has not released.
        self._handles = set()
        self._default_graph_context = None
        self._default_session_context = None
        self._session = c_api.TW_NewSession(
            self._graph._c_graph, target, None if config is None else config.SerializeToString()
        )

    # --- properties -----------------------------------------------------------

    @property
    def graph(self):
        return self._graph

    @property
    def graph_def(self):
        return self._graph.as_graph_def()

    @property
    def sess_str(self):
        return self._target

    # --- running --------------------------------------------------------------

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs the graph and returns the value of `fetches`.

        fetches: a Tensor, an Operation (its value is None), a tensor or
        operation name, or nested lists, tuples, namedtuples and dicts of
        these; the result has the same structure with numpy values.
        feed_dict: {Tensor or "name:0": value} overriding tensors for this run;
        values are converted to the tensor's dtype and checked against its
        static shape.
        options: a tf.RunOptions (trace_level, timeout_in_ms,
        output_partition_graphs).
        run_metadata: a tf.RunMetadata, replaced by what the run reports
        (step_stats when options.trace_level is SOFTWARE_TRACE or above,
        partition_graphs when options.output_partition_graphs is set).

            y = x * 2.0 + 1.0
            sess.run(y, {x: np.ones((1, 4), np.float32)})
        """
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        feed_keys = tuple(feed_dict) if feed_dict else ()
        fetch_type = fetches.__class__
        if fetch_type is list or fetch_type is dict:
            key = (fetch_plan.structure_key(fetches), feed_keys)
        else:
            key = (fetches, feed_keys)
        try:
            plan = self._plans.get(key)
        except TypeError:  # an unhashable structure of another type
            key = (fetch_plan.structure_key(fetches), feed_keys)
            plan = self._plans.get(key)
        if plan is None:
            plan = self._make_plan(key, fetches, feed_keys)

        arrays = []
        if feed_keys:
            values = feed_dict.values()
            if plan.split_feeds is not None:  # SparseTensor feeds: three arrays each
                values = plan.split_feeds(values)
            arrays = _feed_arrays(plan.feeds, values)
        handle = plan.handle
        # Not yet prepared, or with options or metadata.
        if handle is None or options is not None or run_metadata is not None:
            return self._run_prepared(plan, arrays, options, run_metadata)
        try:
            results = _run_callable(self._session, handle, arrays, plan.num_fetches)
        except errors.OpError as error:
            self._attach_op(error)
            raise
        return results[0] if plan.single else plan.build(results, arrays)

    def make_callable(self, fetches, feed_list=None, accept_options=False):
        """Returns a function that runs `fetches` with the values of `feed_list`.

        fetches: as for `run` (a tensor, an operation, a name, or nested
        lists, tuples, namedtuples and dicts of these).
        feed_list: the tensors (or names) fed, in the order the function takes
        their values.
        accept_options: the function also takes `options` (a RunOptions) and
        `run_metadata` keyword arguments, as `run` does.

        The step is prepared now (errors in it are raised here); each call
        only converts and checks its arguments and runs it:

            step = sess.make_callable(y, [x])
            step(np.ones((1, 4), np.float32))   # == sess.run(y, {x: ...})
        """
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        feed_keys = tuple(feed_list) if feed_list else ()
        plan = fetch_plan.make_plan(self._graph, fetches, feed_keys)
        if plan.runs_anything:
            try:
                self._plan_handle(plan, None)
            except errors.OpError as error:
                self._attach_op(error)
                raise
        return _Callable(self, plan, accept_options)

    def _run_plan(self, plan, values, options, run_metadata=None):
        """One run of a make_callable plan with positional feed `values`."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        if plan.split_feeds is not None:
            values = plan.split_feeds(values)
        if len(values) != len(plan.feeds):
            raise errors.InvalidArgumentError(
                None, None, f"Expected {len(plan.feeds)} feed values, but got {len(values)}"
            )
        return self._run_prepared(plan, _feed_arrays(plan.feeds, values), options, run_metadata)

    def _run_prepared(self, plan, arrays, options, run_metadata=None):
        """Runs `plan`'s callable with the converted feed `arrays`; fills
        `run_metadata` (a RunMetadata or None) with what the run reports."""
        if not plan.runs_anything:
            if run_metadata is not None:
                run_metadata.Clear()
            return plan.build([], arrays)
        handle = plan.handle if options is None else None
        try:
            if handle is None:
                handle = self._plan_handle(plan, options)
            if run_metadata is None:
                results = _run_callable(self._session, handle, arrays, plan.num_fetches)
            else:
                results, serialized = _run_callable_with_metadata(
                    self._session, handle, arrays, plan.num_fetches
                )
                run_metadata.ParseFromString(serialized)
        except errors.OpError as error:
            self._attach_op(error)
            raise
        return results[0] if plan.single else plan.build(results, arrays)

    # --- partial runs ----------------------------------------------------------

    def partial_run_setup(self, fetches, feeds=None):
        """Starts a partial run: declares everything it will fetch or run
        (`fetches`, as for `run`) and feed (`feeds`, tensors or names), and
        returns the handle `partial_run` takes. Works on local sessions and
        on grpc:// targets (tensorweave or TensorFlow servers).

            h = sess.partial_run_setup([r1, r2], [a, b, c])
            res = sess.partial_run(h, r1, feed_dict={a: 1, b: 2})
            res = sess.partial_run(h, r2, feed_dict={c: res})
        """
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        if feeds is None:
            feeds = []
        elif not isinstance(feeds, (list, tuple)):
            feeds = [feeds]
        plan = fetch_plan.make_plan(self._graph, fetches, tuple(feeds))
        options = plan.callable_options
        try:
            return c_api.TW_SessionPRunSetup_wrapper(
                self._session,
                [spec.tensor._tf_output for spec in plan.feeds],
                self._tf_outputs(options.fetch),
                [self._graph.get_operation_by_name(name)._c_op for name in options.target],
            )
        except errors.OpError as error:
            self._attach_op(error)
            raise

    def partial_run(self, handle, fetches, feed_dict=None):
        """Continues the partial run `handle` (from `partial_run_setup`):
        feeds `feed_dict` and returns the value of `fetches`, as `run` does.
        Every feed and fetch must have been declared at setup, and each is
        used once; a fetch needing a feed not given yet is
        InvalidArgumentError."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        feed_keys = tuple(feed_dict) if feed_dict else ()
        plan = fetch_plan.make_plan(self._graph, fetches, feed_keys)
        arrays = []
        if feed_keys:
            values = feed_dict.values()
            if plan.split_feeds is not None:
                values = plan.split_feeds(values)
            arrays = _feed_arrays(plan.feeds, values)
        try:
            results = c_api.TW_SessionPRun_wrapper(
                self._session,
                handle,
                [spec.tensor._tf_output for spec in plan.feeds],
                arrays,
                self._tf_outputs(plan.callable_options.fetch),
            )
        except errors.OpError as error:
            self._attach_op(error)
            raise
        return results[0] if plan.single else plan.build(results, arrays)

    def _tf_outputs(self, names):
        return [self._graph.get_tensor_by_name(name)._tf_output for name in names]

    def _make_plan(self, key, fetches, feed_keys):
        if len(self._plans) >= _MAX_CACHED_PLANS:
            for stale in self._plans.values():
                self._release_plan(stale)
            self._plans.clear()
        plan = fetch_plan.make_plan(self._graph, fetches, feed_keys)
        self._plans[key] = plan
        return plan

    def _plan_handle(self, plan, options):
        """The callable running `plan` with RunOptions `options` (or None),
        made on first use. Making it sends the graph's new operations to the
        runtime and compiles the step unless an equal one was."""
        serialized = b"" if options is None else options.SerializeToString()
        if not serialized:
            if plan.handle is not None:
                return plan.handle
        elif serialized in plan.handles_by_options:
            return plan.handles_by_options[serialized]
        callable_options = plan.callable_options
        if serialized:
            callable_options = config_pb2.CallableOptions()
            callable_options.CopyFrom(plan.callable_options)
            callable_options.run_options.ParseFromString(serialized)
        handle = c_api.TW_SessionMakeCallable_wrapper(
            self._session, callable_options.SerializeToString()
        )
        self._handles.add(handle)
        if serialized:
            plan.handles_by_options[serialized] = handle
        else:
            plan.handle = handle
        return handle

    def _release_plan(self, plan):
        """Releases the callables of `plan` (while the session is open)."""
        handles = list(plan.handles_by_options.values())
        if plan.handle is not None:
            handles.append(plan.handle)
        plan.handle = None
        plan.handles_by_options = {}
        for handle in handles:
            self._release_handle(handle)

    def _release_handle(self, handle):
        if handle in self._handles and self._session is not None:
            self._handles.discard(handle)
            c_api.TW_SessionReleaseCallable(self._session, handle)

    def _attach_op(self, error):
        """Points `error.op` at the operation the runtime's message names."""
        if error._op is None:
            name = errors.node_name_from_message(error.message) or ""
            # Nodes the runtime adds for a node (its _Retval, _Send, ...) are
            # named under it: walk up to the first name the graph knows.
            while name and error._op is None:
                error._op = self._graph._nodes_by_name.get(name)
                name = name.rpartition("/")[0]

    # --- lifecycle --------------------------------------------------------------

    def close(self):
        """Cancels steps in flight (they raise CancelledError); later runs fail.
        Releases the session's callables."""
        if self._session is not None and not self._closed:
            self._closed = True
            c_api.TF_CloseSession(self._session)
            handles, self._handles = self._handles, set()
            for handle in handles:
                c_api.TW_SessionReleaseCallable(self._session, handle)

    def __del__(self):
        # Deleting the runtime session releases the callables it still holds.
        session, self._session = getattr(self, "_session", None), None
        if session is not None:
            # Nothing may propagate out of __del__; an error closing is moot now.
            with contextlib.suppress(Exception):
                c_api.TF_DeleteSession(session)

    def list_devices(self):
        """The devices the session can use, each with .name, .device_type,
        .memory_limit_bytes and .incarnation. For a remote session (target "grpc://..."), the
        master's devices and its cluster's."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        return [_DeviceAttributes(*device) for device in c_api.TW_SessionListDevices(self._session)]

    @staticmethod
    def reset(target, containers=None, config=None):
        """Clears the resource containers `containers` (a list of names; the
        default container, "localhost", when None or empty, as in
        TensorFlow; see tf.container) of the sessions `target` reaches: for
        "grpc://host:port" the master's, which also closes every session it
        holds; for "" the variables of every in-process session. Their
        variables become uninitialized.

            tf.Session.reset("grpc://localhost:2222")
        """
        if isinstance(target, bytes):
            target = target.decode()
        if config is not None and not isinstance(config, config_pb2.ConfigProto):
            raise TypeError(f"config must be a tf.ConfigProto, but got {type(config)}")
        names = [c.decode() if isinstance(c, bytes) else c for c in (containers or [])]
        c_api.TW_Reset(target, None if config is None else config.SerializeToString(), names)

    def _stats(self):
        """tensorweave's counters: runs, executors built, executor cache hits."""
        runs, executors_built, cache_hits = c_api.TW_GetSessionStats(self._session)
        return {"runs": runs, "executors_built": executors_built, "cache_hits": cache_hits}

    def as_default(self):
        """A context in which this is the default session (for eval() and run())."""
        return ops.default_session(self)

    def __enter__(self):
        if self._default_graph_context is None:
            self._default_graph_context = self._graph.as_default()
        if self._default_session_context is None:
            self._default_session_context = self.as_default()
        self._default_graph_context.__enter__()
        return self._default_session_context.__enter__()

    def __exit__(self, exc_type, exc_value, traceback):
        try:
            self._default_session_context.__exit__(exc_type, exc_value, traceback)
            self._default_graph_context.__exit__(exc_type, exc_value, traceback)
        finally:
            self._default_session_context = None
            self._default_graph_context = None
            self.close()


class _Callable:
    """What `Session.make_callable` returns: runs one prepared plan."""

    def __init__(self, session, plan, accept_options):
        self._session = session
        self._plan = plan
        self._accept_options = accept_options

    def __call__(self, *args, **kwargs):
        options = None
        if kwargs:
            unexpected = set(kwargs) - (
                {"options", "run_metadata"} if self._accept_options else set()
            )
            if unexpected:
                raise TypeError(f"Unexpected keyword arguments: {sorted(unexpected)}")
            options = kwargs.get("options")
        return self._session._run_plan(self._plan, args, options, kwargs.get("run_metadata"))

    def __del__(self):
        session = getattr(self, "_session", None)
        if session is not None and not session._closed:
            with contextlib.suppress(Exception):
                session._release_plan(self._plan)


class Session(BaseSession):
    """`tf.Session(target='', graph=None, config=None)`."""


class InteractiveSession(BaseSession):
    """A session that installs itself (and its graph) as the default on creation."""

    def __init__(self, target="", graph=None, config=None):
        super().__init__(target, graph, config)
        self._interactive_session = self.as_default()
        self._interactive_session.__enter__()
        self._interactive_graph = self._graph.as_default()
        self._interactive_graph.__enter__()

    def close(self):
        super().close()
        if self._interactive_graph is not None:
            contexts = (self._interactive_graph, self._interactive_session)
            self._interactive_graph = self._interactive_session = None
            for context in contexts:
                context.__exit__(None, None, None)
