"""tf.train.MonitoredSession and MonitoredTrainingSession: a session that
initializes or restores the model, runs hooks around every step and, when a
worker or parameter server restarts, recreates itself and retries the step.

    global_step = tf.train.get_or_create_global_step()
    train_op = optimizer.minimize(loss, global_step=global_step)
    with tf.train.MonitoredTrainingSession(
            master=server.target, is_chief=True, checkpoint_dir="ckpt",
            hooks=[tf.train.StopAtStepHook(last_step=1000)]) as sess:
        while not sess.should_stop():
            sess.run(train_op, feed_dict=...)

What a MonitoredSession is made of (TensorFlow 1.x's layering, kept so that
its behaviour is TensorFlow's):

    _RecoverableSession     AbortedError/UnavailableError from a run (or from
      |                     creating the session): close, create again through
      |                     the creator, run the step again
    _CoordinatedSession     a Coordinator's stop request ends the loop; an
      |                     exception reported to it is raised in the next run
    _HookedSession          hooks' before_run/after_run around each run, their
      |                     fetches and feeds merged into the caller's
    tf.Session              created by a SessionCreator: ChiefSessionCreator
                            (restore the latest checkpoint or run init_op) or
                            WorkerSessionCreator (wait until the chief has)

The Scaffold says how the model is initialized and checked; finalize() fills
in TensorFlow's defaults and makes the graph read-only (it is writable again
once the MonitoredSession is closed, if it was before).
"""

import inspect
import logging
import time

from tensorweave.framework import errors, ops
from tensorweave.ops import control_flow_ops, variables
from tensorweave.proto import config_pb2
from tensorweave.summary import summary_ops
from tensorweave.train import basic_session_run_hooks, session_manager
from tensorweave.train import saver as saver_lib
from tensorweave.train.coordinator import Coordinator
from tensorweave.train.session_run_hook import SessionRunArgs, SessionRunContext, SessionRunValues

__all__ = [
    "ChiefSessionCreator",
    "MonitoredSession",
    "MonitoredTrainingSession",
    "Scaffold",
    "SessionCreator",
    "SingularMonitoredSession",
    "WorkerSessionCreator",
]

_log = logging.getLogger("tensorweave")

# A worker or parameter server went away (or came back with new state): the
# session is recreated and the step retried, as in TensorFlow.
_PREEMPTION_ERRORS = (errors.AbortedError, errors.UnavailableError)

# The default of MonitoredTrainingSession's save_* arguments, told apart from
# None, which turns the saving off.
USE_DEFAULT = object()


class Scaffold:
    """The ops that initialize the model, check it is ready and save it.
    Each left None gets TensorFlow's default in finalize(), or the single
    item of its graph collection when there is one."""

    def __init__(
        self,
        init_op=None,
        init_feed_dict=None,
        init_fn=None,
        ready_op=None,
        ready_for_local_init_op=None,
        local_init_op=None,
        summary_op=None,
        saver=None,
        copy_from_scaffold=None,
        local_init_feed_dict=None,
    ):
        if copy_from_scaffold is not None:
            if not isinstance(copy_from_scaffold, Scaffold):
                raise TypeError("copy_from_scaffold is not a Scaffold instance.")

            def coalesce(mine, theirs):
                return mine if mine is not None else theirs

            other = copy_from_scaffold
            init_op = coalesce(init_op, other.init_op)
            init_feed_dict = coalesce(init_feed_dict, other.init_feed_dict)
            init_fn = coalesce(init_fn, other._user_init_fn)
            ready_op = coalesce(ready_op, other.ready_op)
            ready_for_local_init_op = coalesce(
                ready_for_local_init_op, other.ready_for_local_init_op
            )
            local_init_op = coalesce(local_init_op, other.local_init_op)
            local_init_feed_dict = coalesce(local_init_feed_dict, other.local_init_feed_dict)
            summary_op = coalesce(summary_op, other.summary_op)
            saver = coalesce(saver, other.saver)
        self._user_init_fn = init_fn
        # TensorFlow calls init_fn(scaffold, session).
        self._init_fn = (lambda sess: init_fn(self, sess)) if init_fn else None
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._local_init_op = local_init_op
        self._local_init_feed_dict = local_init_feed_dict
        self._summary_op = summary_op
        self._saver = saver

    def finalize(self):
        """Creates the missing ops and the Saver, then finalizes the default graph."""
        if self._init_op is None:
            self._init_op = Scaffold.get_or_default(
                "init_op",
                ops.GraphKeys.INIT_OP,
                lambda: control_flow_ops.group(variables.global_variables_initializer()),
            )
        if self._ready_op is None:
            self._ready_op = Scaffold.get_or_default(
                "ready_op", ops.GraphKeys.READY_OP, variables.report_uninitialized_variables
            )
        if self._ready_for_local_init_op is None:
            self._ready_for_local_init_op = Scaffold.get_or_default(
                "ready_for_local_init_op",
                ops.GraphKeys.READY_FOR_LOCAL_INIT_OP,
                lambda: variables.report_uninitialized_variables(variables.global_variables()),
            )
        if self._local_init_op is None:
            self._local_init_op = Scaffold.get_or_default(
                "local_init_op", ops.GraphKeys.LOCAL_INIT_OP, Scaffold.default_local_init_op
            )
        if self._summary_op is None:
            # Every summary of the graph, merged once (None when there is none).
            self._summary_op = Scaffold.get_or_default(
                "summary_op", ops.GraphKeys.SUMMARY_OP, summary_ops.merge_all
            )
        if self._saver is None:
            self._saver = _get_saver_or_default()
        self._saver.build()
        ops.get_default_graph().finalize()
        _log.info("Graph was finalized.")
        return self

    @property
    def init_fn(self):
        return self._init_fn

    @property
    def init_op(self):
        return self._init_op

    @property
    def ready_op(self):
        return self._ready_op

    @property
    def ready_for_local_init_op(self):
        return self._ready_for_local_init_op

    @property
    def local_init_op(self):
        return self._local_init_op

    @property
    def local_init_feed_dict(self):
        return self._local_init_feed_dict

    @property
    def summary_op(self):
        return self._summary_op

    @property
    def saver(self):
        return self._saver

    @property
    def init_feed_dict(self):
        return self._init_feed_dict

    @staticmethod
    def get_or_default(arg_name, collection_key, default_constructor):
        """The one item of the collection, else default_constructor()'s result,
        which is then added to the collection."""
        elements = ops.get_collection(collection_key)
        if elements:
            if len(elements) > 1:
                raise RuntimeError(
                    f'More than one item in the collection "{collection_key}". Please indicate '
                    f"which one to use by passing it to the tf.Scaffold constructor as:  "
                    f"tf.Scaffold({arg_name}=item to use)"
                )
            return elements[0]
        op = default_constructor()
        if op is not None:
            ops.add_to_collection(collection_key, op)
        return op

    @staticmethod
    def default_local_init_op():
        """Initializes the local variables (tensorweave has no lookup tables)."""
        return control_flow_ops.group(variables.local_variables_initializer())


def _get_saver_or_default():
    """The Saver of the SAVERS collection, else a new one over every variable
    (allowed to be empty), added to it."""
    savers = ops.get_collection(ops.GraphKeys.SAVERS)
    if savers:
        if len(savers) > 1:
            raise RuntimeError(
                f"More than one item in collection {ops.GraphKeys.SAVERS}. "
                "Please indicate which one to use by passing it to the constructor."
            )
        return savers[0]
    saver = saver_lib.Saver(sharded=True, allow_empty=True)
    ops.add_to_collection(ops.GraphKeys.SAVERS, saver)
    return saver


# --- session creators ---------------------------------------------------------------------


class SessionCreator:
    """Makes the tf.Session a MonitoredSession wraps (again after each recovery)."""

    def create_session(self):
        raise NotImplementedError(f"create_session is not implemented for {self}.")


class _ScaffoldSessionCreator(SessionCreator):
    """What the chief and worker creators share: a Scaffold and one
    SessionManager built from it on first use."""

    def __init__(self, scaffold, master, config):
        self._scaffold = scaffold or Scaffold()
        self._session_manager = None
        self._master = master
        self._config = config

    def _get_session_manager(self):
        if self._session_manager is None:
            self._session_manager = session_manager.SessionManager(
                local_init_op=self._scaffold.local_init_op,
                local_init_feed_dict=self._scaffold.local_init_feed_dict,
                ready_op=self._scaffold.ready_op,
                ready_for_local_init_op=self._scaffold.ready_for_local_init_op,
                graph=ops.get_default_graph(),
            )
        return self._session_manager


class ChiefSessionCreator(_ScaffoldSessionCreator):
    """Restores the latest checkpoint of checkpoint_dir (or the file
    checkpoint_filename_with_path), else initializes the model."""

    def __init__(
        self,
        scaffold=None,
        master="",
        config=None,
        checkpoint_dir=None,
        checkpoint_filename_with_path=None,
    ):
        super().__init__(scaffold, master, config)
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_filename_with_path = checkpoint_filename_with_path

    def create_session(self):
        self._scaffold.finalize()
        return self._get_session_manager().prepare_session(
            self._master,
            saver=self._scaffold.saver,
            checkpoint_dir=self._checkpoint_dir,
            checkpoint_filename_with_path=self._checkpoint_filename_with_path,
            config=self._config,
            init_op=self._scaffold.init_op,
            init_feed_dict=self._scaffold.init_feed_dict,
            init_fn=self._scaffold.init_fn,
        )


class WorkerSessionCreator(_ScaffoldSessionCreator):
    """Waits, at most max_wait_secs, until the chief has initialized or
    restored the model (DeadlineExceededError after that)."""

    def __init__(self, scaffold=None, master="", config=None, max_wait_secs=30 * 60):
        super().__init__(scaffold, master, config)
        self._max_wait_secs = max_wait_secs

    def create_session(self):
        self._scaffold.finalize()
        return self._get_session_manager().wait_for_session(
            self._master, config=self._config, max_wait_secs=self._max_wait_secs
        )


# --- the monitored sessions ---------------------------------------------------------------


def MonitoredTrainingSession(
    master="",
    is_chief=True,
    checkpoint_dir=None,
    scaffold=None,
    hooks=None,
    chief_only_hooks=None,
    save_checkpoint_secs=USE_DEFAULT,
    save_summaries_steps=USE_DEFAULT,
    save_summaries_secs=USE_DEFAULT,
    config=None,
    stop_grace_period_secs=120,
    log_step_count_steps=100,
    max_wait_secs=7200,
    save_checkpoint_steps=USE_DEFAULT,
    summary_dir=None,
    save_graph_def=True,
):
    """A MonitoredSession for training. The chief restores or initializes the
    model and, with a checkpoint_dir, saves it every 600 s by default
    (save_checkpoint_secs / save_checkpoint_steps) and logs global steps/sec
    every log_step_count_steps; a non-chief waits, at most max_wait_secs, for
    the chief and runs only `hooks`. With a summary_dir (default:
    checkpoint_dir) the chief also writes the scaffold's summaries every
    save_summaries_steps steps (100 by default) or save_summaries_secs
    seconds."""
    if save_checkpoint_steps is USE_DEFAULT and save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_steps, save_checkpoint_secs = None, 600
    elif save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_secs = None
    elif save_checkpoint_steps is USE_DEFAULT:
        save_checkpoint_steps = None
    if save_summaries_steps is USE_DEFAULT and save_summaries_secs is USE_DEFAULT:
        save_summaries_steps, save_summaries_secs = 100, None
    elif save_summaries_secs is USE_DEFAULT:
        save_summaries_secs = None
    elif save_summaries_steps is USE_DEFAULT:
        save_summaries_steps = None
    scaffold = scaffold or Scaffold()
    if not is_chief:
        creator = WorkerSessionCreator(
            scaffold=scaffold, master=master, config=config, max_wait_secs=max_wait_secs
        )
        return MonitoredSession(
            session_creator=creator,
            hooks=hooks or [],
            stop_grace_period_secs=stop_grace_period_secs,
        )
    all_hooks = list(chief_only_hooks or [])
    creator = ChiefSessionCreator(
        scaffold=scaffold, checkpoint_dir=checkpoint_dir, master=master, config=config
    )
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir and log_step_count_steps and log_step_count_steps > 0:
        all_hooks.append(
            basic_session_run_hooks.StepCounterHook(
                output_dir=summary_dir, every_n_steps=log_step_count_steps
            )
        )
    if summary_dir and (
        (save_summaries_steps and save_summaries_steps > 0)
        or (save_summaries_secs and save_summaries_secs > 0)
    ):
        all_hooks.append(
            basic_session_run_hooks.SummarySaverHook(
                scaffold=scaffold,
                save_steps=save_summaries_steps,
                save_secs=save_summaries_secs,
                output_dir=summary_dir,
            )
        )
    if checkpoint_dir and (
        (save_checkpoint_secs and save_checkpoint_secs > 0)
        or (save_checkpoint_steps and save_checkpoint_steps > 0)
    ):
        all_hooks.append(
            basic_session_run_hooks.CheckpointSaverHook(
                checkpoint_dir,
                save_steps=save_checkpoint_steps,
                save_secs=save_checkpoint_secs,
                scaffold=scaffold,
                save_graph_def=save_graph_def,
            )
        )
    all_hooks.extend(hooks or [])
    return MonitoredSession(
        session_creator=creator, hooks=all_hooks, stop_grace_period_secs=stop_grace_period_secs
    )


class _MonitoredSession:
    """What MonitoredSession and SingularMonitoredSession share."""

    def __init__(self, session_creator, hooks, should_recover, stop_grace_period_secs=120):
        self._graph_was_finalized = ops.get_default_graph().finalized
        self._hooks = list(hooks or [])
        for hook in self._hooks:
            hook.begin()
        self._coordinated_creator = _CoordinatedSessionCreator(
            session_creator=session_creator or ChiefSessionCreator(),
            hooks=self._hooks,
            stop_grace_period_secs=stop_grace_period_secs,
        )
        if should_recover:
            self._sess = _RecoverableSession(self._coordinated_creator)
        else:
            self._sess = self._coordinated_creator.create_session()

    @property
    def graph(self):
        raw = self._tf_sess()
        return None if raw is None else raw.graph

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Session.run with the hooks around it; returns only `fetches`' values."""
        return self._sess.run(
            fetches, feed_dict=feed_dict, options=options, run_metadata=run_metadata
        )

    def run_step_fn(self, step_fn):
        """Calls step_fn(step_context): the step may run ops without hooks
        (step_context.session) and with them (step_context.run_with_hooks),
        and step_context.request_stop() ends the loop. A preemption inside
        the step recreates the session and calls step_fn again."""
        arguments = _fn_args(step_fn)
        if arguments != ("step_context",) and arguments != ("self", "step_context"):
            raise ValueError(
                "`step_fn` may either have one `step_context` argument, or `self` and "
                f"`step_context` arguments if it's an instance method. Got {arguments} instead."
            )
        return self._sess.run_step_fn(step_fn, self._tf_sess, run_with_hooks=None)

    class StepContext:
        """What run_step_fn gives step_fn."""

        def __init__(self, session, run_with_hooks_fn):
            self._session = session
            self._run_with_hooks_fn = run_with_hooks_fn

        @property
        def session(self):
            """The raw tf.Session: runs here bypass the hooks."""
            return self._session

        def run_with_hooks(self, *args, **kwargs):
            return self._run_with_hooks_fn(*args, **kwargs)

        def request_stop(self):
            """Ends the loop: raises StopIteration, which the `with` block absorbs."""
            raise StopIteration("step_fn has requested the iterations to stop.")

    def should_stop(self):
        return self._sess is None or self._sess.should_stop()

    def close(self):
        self._close_internal()

    def __enter__(self):
        return self

    def __exit__(self, exception_type, exception_value, traceback):
        # The end of the input (OutOfRangeError) and a stop requested from a
        # step function are the normal ends of a loop: the hooks' end() runs
        # and nothing propagates.
        if exception_type in (errors.OutOfRangeError, StopIteration):
            exception_type = None
        self._close_internal(exception_type)
        return exception_type is None

    def _close_internal(self, exception_type=None):
        try:
            if not exception_type:
                for hook in self._hooks:
                    hook.end(self._coordinated_creator.tf_sess)
        finally:
            try:
                if self._sess is None:
                    raise RuntimeError("Session is already closed.")
                self._sess.close()
            finally:
                self._sess = None
                self._coordinated_creator.tf_sess = None
                self._coordinated_creator.coord = None
                if not self._graph_was_finalized:
                    ops.get_default_graph()._unsafe_unfinalize()

    def _is_closed(self):
        return self._coordinated_creator.tf_sess is None

    def _tf_sess(self):
        return self._coordinated_creator.tf_sess


class MonitoredSession(_MonitoredSession):
    """A session with hooks that recovers from preemptions (AbortedError,
    UnavailableError) by creating a new session and retrying the run.
    session_creator defaults to ChiefSessionCreator()."""

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120):
        super().__init__(
            session_creator,
            hooks,
            should_recover=True,
            stop_grace_period_secs=stop_grace_period_secs,
        )


class SingularMonitoredSession(_MonitoredSession):
    """A MonitoredSession for a single process: a chief that does not recover
    from preemptions and exposes its raw session."""

    def __init__(
        self,
        hooks=None,
        scaffold=None,
        master="",
        config=None,
        checkpoint_dir=None,
        stop_grace_period_secs=120,
        checkpoint_filename_with_path=None,
    ):
        creator = ChiefSessionCreator(
            scaffold=scaffold,
            master=master,
            config=config,
            checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path,
        )
        super().__init__(
            creator, hooks, should_recover=False, stop_grace_period_secs=stop_grace_period_secs
        )

    def raw_session(self):
        return self._tf_sess()


def _fn_args(fn):
    """The names of fn's positional parameters, without the bound `self`."""
    args = inspect.getfullargspec(fn).args
    if inspect.ismethod(fn) and args:
        args = args[1:]
    return tuple(args)


class _CoordinatedSessionCreator(SessionCreator):
    """Creates the raw session, gives it to the hooks' after_create_session
    with a new Coordinator, and wraps it in the hooked and coordinated layers."""

    def __init__(self, session_creator, hooks, stop_grace_period_secs):
        self._session_creator = session_creator
        self._hooks = hooks
        self._stop_grace_period_secs = stop_grace_period_secs
        self.coord = None
        self.tf_sess = None

    def create_session(self):
        self.tf_sess = self._session_creator.create_session()
        # Every error given to request_stop is kept, even OutOfRangeError
        # (TensorFlow's choice): should_stop() then says True and close()
        # raises it, and the `with` block absorbs an OutOfRangeError.
        self.coord = Coordinator(clean_stop_exception_types=[])
        for hook in self._hooks:
            hook.after_create_session(self.tf_sess, self.coord)
        return _CoordinatedSession(
            _HookedSession(self.tf_sess, self._hooks), self.coord, self._stop_grace_period_secs
        )


# --- the layers of a monitored session ----------------------------------------------------


class _WrappedSession:
    """A session that forwards to another; the layers below refine it."""

    def __init__(self, sess):
        self._sess = sess
        self._wrapped_is_stoppable = isinstance(sess, _WrappedSession)

    @property
    def graph(self):
        return self._sess.graph

    @property
    def sess_str(self):
        return self._sess.sess_str

    def should_stop(self):
        """True when this layer or one below wants to stop, or the session is closed."""
        if self._check_stop():
            return True
        if self._sess:
            return self._wrapped_is_stoppable and self._sess.should_stop()
        return True

    def _check_stop(self):
        return False

    def close(self):
        if self._sess:
            try:
                self._sess.close()
            except _PREEMPTION_ERRORS as error:
                _log.error(
                    "An error occurred when attempting to close the session. This may be due "
                    "to a preemption in a connected worker or parameter server. Error: %s",
                    error,
                )
            finally:
                self._sess = None

    def run(self, *args, **kwargs):
        return self._sess.run(*args, **kwargs)

    def run_step_fn(self, step_fn, raw_session, run_with_hooks):
        """`raw_session` returns the current tf.Session (it changes on recovery)."""
        run_with_hooks = run_with_hooks or self.run
        return step_fn(_MonitoredSession.StepContext(raw_session(), run_with_hooks))


class _RecoverableSession(_WrappedSession):
    """Closes and recreates the session when a run (or the creation itself)
    raises AbortedError or UnavailableError, then runs again."""

    # Creation is retried at once, then after growing pauses, so a task that
    # stays down is not polled in a tight loop.
    _FIRST_RETRY_PAUSE_SECS = 0.05
    _MAX_RETRY_PAUSE_SECS = 5.0

    def __init__(self, sess_creator):
        self._sess_creator = sess_creator
        super().__init__(self._create_session())

    def _create_session(self):
        pause = 0.0
        while True:
            try:
                return self._sess_creator.create_session()
            except _PREEMPTION_ERRORS as error:
                _log.info(
                    "An error was raised while a session was being created. This may be due to "
                    "a preemption of a connected worker or parameter server. A new session will "
                    "be created. Error: %s",
                    error,
                )
            time.sleep(pause)
            pause = min(max(pause * 2, self._FIRST_RETRY_PAUSE_SECS), self._MAX_RETRY_PAUSE_SECS)

    def _recover_after(self, error):
        _log.info(
            "An error was raised. This may be due to a preemption in a connected worker or "
            "parameter server. The current session will be closed and a new session will be "
            "created. Error: %s",
            error,
        )
        self.close()
        self._sess = None

    def _check_stop(self):
        try:
            if self._sess:
                return self._sess._check_stop()
            return True
        except _PREEMPTION_ERRORS as error:
            self._recover_after(error)
            self._sess = self._create_session()
            return False
        except Exception:  # noqa: BLE001 -- TensorFlow: any other error means stop
            return True

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        while True:
            try:
                if not self._sess:
                    self._sess = self._create_session()
                return self._sess.run(
                    fetches, feed_dict=feed_dict, options=options, run_metadata=run_metadata
                )
            except _PREEMPTION_ERRORS as error:
                self._recover_after(error)

    def run_step_fn(self, step_fn, raw_session, run_with_hooks):
        while True:
            try:
                if not self._sess:
                    self._sess = self._create_session()
                # Runs with hooks go to the coordinated session below, so that a
                # preemption inside step_fn reaches this loop.
                return self._sess.run_step_fn(step_fn, raw_session, self._sess.run)
            except _PREEMPTION_ERRORS as error:
                self._recover_after(error)


class _CoordinatedSession(_WrappedSession):
    """Stops when the Coordinator is asked to; an exception reported to it is
    raised by should_stop() (which the recoverable layer turns into True) and
    by close()."""

    def __init__(self, sess, coord, stop_grace_period_secs=120):
        super().__init__(sess)
        self._coord = coord
        self._stop_grace_period_secs = stop_grace_period_secs

    def _check_stop(self):
        # An exception reported to the coordinator surfaces here.
        self._coord.raise_requested_exception()
        return self._coord.should_stop()

    def close(self):
        self._coord.request_stop()
        try:
            self._coord.join(
                stop_grace_period_secs=self._stop_grace_period_secs, ignore_live_threads=True
            )
        finally:
            try:
                _WrappedSession.close(self)
            except Exception:  # noqa: BLE001 -- closing must not hide the join's error
                _log.debug("Ignoring an error while closing a session", exc_info=True)

    def run(self, *args, **kwargs):
        try:
            return self._sess.run(*args, **kwargs)
        except _PREEMPTION_ERRORS:
            raise
        except Exception as original:
            # TensorFlow's rule: the run's own error propagates, unless a
            # preemption was reported to the coordinator, which takes its place
            # so that the session is recovered.
            try:
                self._coord.raise_requested_exception()
            except _PREEMPTION_ERRORS:
                raise
            except Exception:  # noqa: BLE001
                raise original from None
            raise


class _HookedSession(_WrappedSession):
    """Calls the hooks around each run and merges their fetches, feeds and
    options into it; the caller gets back exactly its own fetches' values."""

    def __init__(self, sess, hooks):
        super().__init__(sess)
        self._hooks = hooks
        self._should_stop = False

    def _check_stop(self):
        return self._should_stop

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if self.should_stop():
            raise RuntimeError("Run called even after should_stop requested.")
        actual_fetches = {"caller": fetches}
        run_context = SessionRunContext(
            original_args=SessionRunArgs(fetches, feed_dict), session=self._sess
        )
        merged_options = config_pb2.RunOptions()
        if options is not None:
            merged_options.CopyFrom(options)
        feed_dict, hooks_gave_options = self._call_hook_before_run(
            run_context, actual_fetches, feed_dict, merged_options
        )
        # Runs without options take the session's prepared fast path.
        run_options = merged_options if options is not None or hooks_gave_options else None
        outputs = _WrappedSession.run(
            self,
            fetches=actual_fetches,
            feed_dict=feed_dict,
            options=run_options,
            run_metadata=run_metadata,
        )
        for hook in self._hooks:
            hook.after_run(
                run_context,
                SessionRunValues(
                    results=outputs.get(hook),
                    options=merged_options,
                    run_metadata=run_metadata,
                ),
            )
        self._should_stop = self._should_stop or run_context.stop_requested
        return outputs["caller"]

    def _call_hook_before_run(self, run_context, fetch_dict, user_feed_dict, options):
        """Adds each hook's fetches to fetch_dict (keyed by the hook) and merges
        its options into `options`; returns (the feed_dict to run with,
        whether any hook gave options). Two parties feeding one tensor is a
        RuntimeError."""
        hook_feeds = {}
        hooks_gave_options = False
        for hook in self._hooks:
            request = hook.before_run(run_context)
            if request is None:
                continue
            if request.fetches is not None:
                fetch_dict[hook] = request.fetches
            if request.feed_dict:
                _raise_if_feeds_intersect(
                    hook_feeds, request.feed_dict, "Same tensor is fed by two hooks."
                )
                hook_feeds.update(request.feed_dict)
            if request.options:
                # The longest timeout wins, as in TensorFlow (0 means none).
                options.timeout_in_ms = max(options.timeout_in_ms, request.options.timeout_in_ms)
                hooks_gave_options = True
        if not hook_feeds:
            return user_feed_dict, hooks_gave_options
        if not user_feed_dict:
            return hook_feeds, hooks_gave_options
        _raise_if_feeds_intersect(
            user_feed_dict, hook_feeds, "Same tensor is fed by a SessionRunHook and user."
        )
        hook_feeds.update(user_feed_dict)
        return hook_feeds, hooks_gave_options


def _raise_if_feeds_intersect(feeds1, feeds2, message):
    intersection = set(feeds1) & set(feeds2)
    if intersection:
        raise RuntimeError(f"{message} Conflict(s): {list(intersection)}")
