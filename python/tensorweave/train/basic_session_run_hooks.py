"""The SessionRunHooks TensorFlow 1.x ships, for MonitoredSession.

    hooks = [
        tf.train.StopAtStepHook(last_step=1000),                 # stop at global step 1000
        tf.train.CheckpointSaverHook("ckpt", save_steps=100),    # model.ckpt-<step> every 100 steps
        tf.train.StepCounterHook(every_n_steps=100),             # logs global_step/sec
        tf.train.LoggingTensorHook({"loss": loss}, every_n_iter=10),
        tf.train.NanTensorHook(loss),                            # NanLossDuringTrainingError
    ]
    with tf.train.MonitoredSession(hooks=hooks) as sess:
        while not sess.should_stop():
            sess.run(train_op)

Hooks that follow the global step fetch a copy of it beside the caller's
fetches; that copy may have been read before the training op incremented the
step (it is "stale"), so a hook reads the step again, in a run of its own,
only when the stale value says it is probably time to act. Timing goes
through SecondOrStepTimer, which reads the clock through this module's
`time` (tests replace it with a fake clock).

Hooks that write summaries (SummarySaverHook, StepCounterHook, and the graph
CheckpointSaverHook adds) share one tf.summary.FileWriter per directory
through FileWriterCache, as TensorFlow's do.
"""

import logging
import os
import time

import numpy as np

from tensorweave.framework import errors, ops
from tensorweave.proto import event_pb2, summary_pb2
from tensorweave.summary.writer import FileWriterCache
from tensorweave.train import meta_graph, training_util
from tensorweave.train.session_run_hook import SessionRunArgs, SessionRunHook

__all__ = [
    "CheckpointSaverHook",
    "CheckpointSaverListener",
    "FeedFnHook",
    "FinalOpsHook",
    "GlobalStepWaiterHook",
    "LoggingTensorHook",
    "NanLossDuringTrainingError",
    "NanTensorHook",
    "SecondOrStepTimer",
    "StepCounterHook",
    "StopAtStepHook",
    "SummarySaverHook",
]

_log = logging.getLogger("tensorweave")


def _global_step_read(hook_name):
    step = training_util._get_or_create_global_step_read()
    if step is None:
        raise RuntimeError(f"Global step should be created to use {hook_name}.")
    return step


# --- timers -------------------------------------------------------------------------------


class SecondOrStepTimer:
    """Triggers every `every_secs` seconds or every `every_steps` steps (exactly
    one of them), and on the first step asked about."""

    def __init__(self, every_secs=None, every_steps=None):
        if every_secs is None and every_steps is None:
            raise ValueError("Either every_secs or every_steps should be provided.")
        if every_secs is not None and every_steps is not None:
            raise ValueError("Can not provide both every_secs and every_steps.")
        self._every_secs = every_secs
        self._every_steps = every_steps
        self.reset()

    def reset(self):
        self._last_triggered_step = None
        self._last_triggered_time = None

    def should_trigger_for_step(self, step):
        """True when the timer never triggered, or when, for a new step, the
        time or the steps since the last trigger reach the period."""
        if self._last_triggered_step is None:
            return True
        if self._last_triggered_step == step:
            return False
        if self._every_secs is not None:
            return time.time() >= self._last_triggered_time + self._every_secs
        return step >= self._last_triggered_step + self._every_steps

    def update_last_triggered_step(self, step):
        """Records a trigger at `step`; returns (seconds, steps) since the
        previous one, (None, None) for the first."""
        now = time.time()
        if self._last_triggered_time is None:
            elapsed = (None, None)
        else:
            elapsed = (now - self._last_triggered_time, step - self._last_triggered_step)
        self._last_triggered_time = now
        self._last_triggered_step = step
        return elapsed

    def last_triggered_step(self):
        return self._last_triggered_step


class _NeverTriggerTimer:
    """A timer for hooks that only act at the end."""

    def reset(self):
        pass

    def should_trigger_for_step(self, step):
        return False

    def update_last_triggered_step(self, step):
        return (None, None)

    def last_triggered_step(self):
        return None


# --- stopping -----------------------------------------------------------------------------


class StopAtStepHook(SessionRunHook):
    """Requests a stop once the global step reaches `last_step`, or
    `num_steps` past its value when the session was created."""

    def __init__(self, num_steps=None, last_step=None):
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        self._num_steps = num_steps
        self._last_step = last_step

    def begin(self):
        self._global_step_tensor = _global_step_read("StopAtStepHook")

    def after_create_session(self, session, coord):
        if self._last_step is None:
            self._last_step = int(session.run(self._global_step_tensor)) + self._num_steps

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        # The fetched step may predate this run's increment: only when it says
        # the end is near is the step read again to decide.
        near_end = run_values.results + 1 >= self._last_step
        if near_end and run_context.session.run(self._global_step_tensor) >= self._last_step:
            run_context.request_stop()


class NanLossDuringTrainingError(RuntimeError):
    def __str__(self):
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    """Raises NanLossDuringTrainingError (or, with fail_on_nan_loss=False,
    requests a stop) when `loss_tensor` is NaN after a run."""

    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        self._loss_tensor = loss_tensor
        self._fail_on_nan_loss = fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context, run_values):
        if np.isnan(run_values.results):
            message = "Model diverged with loss = NaN."
            if self._fail_on_nan_loss:
                _log.error(message)
                raise NanLossDuringTrainingError
            _log.warning(message)
            run_context.request_stop()


# --- checkpoints --------------------------------------------------------------------------


class CheckpointSaverListener:
    """Called by CheckpointSaverHook around each save; after_save returning
    True requests a stop."""

    def begin(self):
        pass

    def before_save(self, session, global_step_value):
        pass

    def after_save(self, session, global_step_value):
        pass

    def end(self, session, global_step_value):
        pass


class CheckpointSaverHook(SessionRunHook):
    """Saves `<checkpoint_dir>/<checkpoint_basename>-<global step>` when the
    session is created, then every save_secs seconds or save_steps steps,
    and at the end unless the last step was just saved."""

    def __init__(
        self,
        checkpoint_dir,
        save_secs=None,
        save_steps=None,
        saver=None,
        checkpoint_basename="model.ckpt",
        scaffold=None,
        listeners=None,
        save_graph_def=True,
    ):
        _log.info("Create CheckpointSaverHook.")
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._saver = saver
        self._checkpoint_dir = checkpoint_dir
        self._save_path = os.path.join(checkpoint_dir, checkpoint_basename)
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = listeners or []
        # How far one run can move the global step (TensorFlow's default: so
        # far that the stale step always makes after_run read it again).
        self._steps_per_run = 1000000
        self._save_graph_def = save_graph_def

    def _set_steps_per_run(self, steps_per_run):
        self._steps_per_run = steps_per_run

    def begin(self):
        self._summary_writer = FileWriterCache.get(self._checkpoint_dir)
        self._global_step_tensor = _global_step_read("CheckpointSaverHook")
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session, coord):
        global_step = int(session.run(self._global_step_tensor))
        if self._save_graph_def:
            graph = ops.get_default_graph()
            training_util.write_graph(graph.as_graph_def(), self._checkpoint_dir, "graph.pbtxt")
            # TensorBoard's graph tab reads the graph from the event file.
            self._summary_writer.add_graph(graph)
            self._summary_writer.add_meta_graph(
                meta_graph.create_meta_graph_def(graph, saver=self._get_saver())
            )
        self._save(session, global_step)
        self._timer.update_last_triggered_step(global_step)

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        if self._timer.should_trigger_for_step(run_values.results + self._steps_per_run):
            global_step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(global_step):
                self._timer.update_last_triggered_step(global_step)
                if self._save(run_context.session, global_step):
                    run_context.request_stop()

    def end(self, session):
        last_step = int(session.run(self._global_step_tensor))
        if last_step != self._timer.last_triggered_step():
            self._save(session, last_step)
        for listener in self._listeners:
            listener.end(session, last_step)

    def _save(self, session, step):
        """Saves; True when a listener asks to stop training."""
        for listener in self._listeners:
            listener.before_save(session, step)
        _log.info("Saving checkpoints for %d into %s.", step, self._save_path)
        self._get_saver().save(
            session, self._save_path, global_step=step, write_meta_graph=self._save_graph_def
        )
        self._summary_writer.add_session_log(
            event_pb2.SessionLog(
                status=event_pb2.SessionLog.CHECKPOINT, checkpoint_path=self._save_path
            ),
            step,
        )
        should_stop = False
        for listener in self._listeners:
            if listener.after_save(session, step):
                _log.info(
                    "A CheckpointSaverListener requested that training be stopped: %s", listener
                )
                should_stop = True
        return should_stop

    def _get_saver(self):
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        savers = ops.get_collection(ops.GraphKeys.SAVERS)
        if not savers:
            raise RuntimeError(
                f"No items in collection {ops.GraphKeys.SAVERS}. Please add a saver to the "
                "collection or provide a saver or scaffold."
            )
        if len(savers) > 1:
            raise RuntimeError(
                f"More than one item in collection {ops.GraphKeys.SAVERS}. Please indicate "
                "which one to use by passing it to the constructor."
            )
        self._saver = savers[0]
        return self._saver


# --- reporting ----------------------------------------------------------------------------


class StepCounterHook(SessionRunHook):
    """Logs "global_step/sec: <rate>" every every_n_steps global steps or
    every_n_secs seconds."""

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None, summary_writer=None):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)
        # The rate also goes, as the summary "<global step>/sec", to
        # summary_writer or else to output_dir's cached writer.
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._last_global_step = None
        self._steps_per_run = 1
        self._warnings_left = 5

    def _set_steps_per_run(self, steps_per_run):
        self._steps_per_run = steps_per_run

    def begin(self):
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = FileWriterCache.get(self._output_dir)
        self._global_step_tensor = _global_step_read("StepCounterHook")
        self._summary_tag = training_util.get_global_step().op.name + "/sec"

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def _log_rate(self, elapsed_steps, elapsed_time, global_step):
        steps_per_sec = elapsed_steps / elapsed_time
        if self._summary_writer is not None:
            summary = summary_pb2.Summary(
                value=[summary_pb2.Summary.Value(tag=self._summary_tag, simple_value=steps_per_sec)]
            )
            self._summary_writer.add_summary(summary, global_step)
        _log.info("%s: %g", self._summary_tag, steps_per_sec)

    def after_run(self, run_context, run_values):
        stale_global_step = run_values.results
        if self._timer.should_trigger_for_step(stale_global_step + self._steps_per_run):
            global_step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(global_step):
                elapsed_time, elapsed_steps = self._timer.update_last_triggered_step(global_step)
                # (No rate for the first trigger, nor over a clock that did not move.)
                if elapsed_time:
                    self._log_rate(elapsed_steps, elapsed_time, global_step)
        if stale_global_step == self._last_global_step and self._warnings_left > 0:
            self._warnings_left -= 1
            _log.warning(
                "It seems that global step (tf.train.get_global_step) has not been increased. "
                "Current value (could be stable): %s vs previous value: %s. You could increase "
                "the global step by passing tf.train.get_global_step() to "
                "Optimizer.apply_gradients or Optimizer.minimize.",
                stale_global_step,
                self._last_global_step,
            )
        self._last_global_step = stale_global_step


class SummarySaverHook(SessionRunHook):
    """Runs the summary op every save_steps steps or save_secs seconds (and
    on the first run) and writes what it returns at the global step, to
    summary_writer or else to output_dir's cached FileWriter. The summary op
    is `summary_op` (one op or a list) or, exactly one of the two, the
    scaffold's; the first run also writes a SessionLog START."""

    def __init__(
        self,
        save_steps=None,
        save_secs=None,
        output_dir=None,
        summary_writer=None,
        scaffold=None,
        summary_op=None,
    ):
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._summary_op = summary_op
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self):
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = FileWriterCache.get(self._output_dir)
        self._next_step = None  # None until the first run
        self._global_step_tensor = training_util._get_or_create_global_step_read()
        if self._global_step_tensor is None:
            raise RuntimeError("Global step should be created to use SummarySaverHook.")

    def _summary_ops(self):
        summary_op = self._summary_op if self._summary_op is not None else self._scaffold.summary_op
        if summary_op is None:
            return None
        return summary_op if isinstance(summary_op, list) else [summary_op]

    def before_run(self, run_context):
        self._request_summary = self._next_step is None or self._timer.should_trigger_for_step(
            self._next_step
        )
        requests = {"global_step": self._global_step_tensor}
        summary_ops = self._summary_ops() if self._request_summary else None
        if summary_ops is not None:
            requests["summary"] = summary_ops
        return SessionRunArgs(requests)

    def after_run(self, run_context, run_values):
        if not self._summary_writer:
            return
        # The fetched step may predate this run's increment: read it again
        # when it is written (the first run and runs that write summaries).
        global_step = int(run_values.results["global_step"]) + 1
        if self._next_step is None or self._request_summary:
            global_step = int(run_context.session.run(self._global_step_tensor))
        if self._next_step is None:
            self._summary_writer.add_session_log(
                event_pb2.SessionLog(status=event_pb2.SessionLog.START), global_step
            )
        if self._request_summary:
            self._timer.update_last_triggered_step(global_step)
            for summary in run_values.results.get("summary", ()):
                self._summary_writer.add_summary(summary, global_step)
        self._next_step = global_step + 1

    def end(self, session=None):
        if self._summary_writer:
            self._summary_writer.flush()


class LoggingTensorHook(SessionRunHook):
    """Logs the values of `tensors` (a list of tensors or names, or a dict of
    tag: tensor) every every_n_iter runs or every_n_secs seconds, and/or at
    the end; `formatter(values_by_tag)` makes the line when given."""

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False, formatter=None):
        only_log_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_log_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError(
                "either at_end and/or exactly one of every_n_iter and every_n_secs must be provided."
            )
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        if not isinstance(tensors, dict):
            self._tag_order = list(tensors)
            tensors = {item: item for item in tensors}
        else:
            self._tag_order = sorted(tensors.keys())
        self._tensors = tensors
        self._formatter = formatter
        self._timer = (
            _NeverTriggerTimer()
            if only_log_at_end
            else SecondOrStepTimer(every_secs=every_n_secs, every_steps=every_n_iter)
        )
        self._log_at_end = at_end

    def begin(self):
        self._timer.reset()
        self._iter_count = 0
        self._current_tensors = {
            tag: _as_graph_element(tensor) for tag, tensor in self._tensors.items()
        }

    def before_run(self, run_context):
        self._should_trigger = self._timer.should_trigger_for_step(self._iter_count)
        return SessionRunArgs(self._current_tensors) if self._should_trigger else None

    def _log_tensors(self, tensor_values):
        elapsed_secs, _ = self._timer.update_last_triggered_step(self._iter_count)
        if self._formatter:
            _log.info(self._formatter(tensor_values))
            return
        with np.printoptions(suppress=True):
            line = ", ".join(f"{tag} = {tensor_values[tag]}" for tag in self._tag_order)
        if elapsed_secs is not None:
            _log.info("%s (%.3f sec)", line, elapsed_secs)
        else:
            _log.info("%s", line)

    def after_run(self, run_context, run_values):
        if self._should_trigger:
            self._log_tensors(run_values.results)
        self._iter_count += 1

    def end(self, session):
        if self._log_at_end:
            self._log_tensors(session.run(self._current_tensors))


def _as_graph_element(obj):
    """The tensor `obj` names in the default graph ("x" means "x:0" when x has
    one output), or `obj` itself when it is already in that graph."""
    graph = ops.get_default_graph()
    if not isinstance(obj, str):
        if getattr(obj, "graph", None) is not graph:
            raise ValueError(
                f"Passed {obj} should have graph attribute that is equal to current graph {graph}."
            )
        return obj
    if ":" in obj:
        return graph.as_graph_element(obj)
    element = graph.as_graph_element(obj + ":0")
    try:
        graph.as_graph_element(obj + ":1")
    except (KeyError, ValueError):
        return element
    raise ValueError(
        f"Name {obj} is ambiguous, as this `Operation` has multiple outputs (at least 2)."
    )


# --- feeding, waiting, final values -------------------------------------------------------


class GlobalStepWaiterHook(SessionRunHook):
    """Delays the first run until the global step reaches `wait_until_step`
    (a worker that starts after the chief has trained a while)."""

    def __init__(self, wait_until_step):
        self._wait_until_step = wait_until_step

    def begin(self):
        self._worker_is_started = False
        self._global_step_tensor = _global_step_read("_GlobalStepWaiterHook")

    def before_run(self, run_context):
        if self._worker_is_started:
            return
        if self._wait_until_step <= 0:
            self._worker_is_started = True
            return
        _log.info("Waiting for global step %d before starting training.", self._wait_until_step)
        last_logged_step = 0
        while True:
            current_step = run_context.session.run(self._global_step_tensor)
            if current_step >= self._wait_until_step:
                self._worker_is_started = True
                return
            if current_step - last_logged_step > 1000:
                _log.info(
                    "Waiting for global step %d before starting training. Current step is %d.",
                    self._wait_until_step,
                    current_step,
                )
                last_logged_step = current_step
            time.sleep(0.5)


class FinalOpsHook(SessionRunHook):
    """Runs `final_ops` when the session ends; their values are then in
    `final_ops_values`."""

    def __init__(self, final_ops, final_ops_feed_dict=None):
        self._final_ops = final_ops
        self._final_ops_feed_dict = final_ops_feed_dict
        self._final_ops_values = None

    @property
    def final_ops_values(self):
        return self._final_ops_values

    def end(self, session):
        if self._final_ops is None:
            return
        try:
            self._final_ops_values = session.run(
                self._final_ops, feed_dict=self._final_ops_feed_dict
            )
        except (errors.OutOfRangeError, StopIteration):
            _log.warning(
                "An OutOfRangeError or StopIteration was raised by the ops of FinalOpsHook: "
                "they depend on an input source, which they should not (read variables only)."
            )
            raise


class FeedFnHook(SessionRunHook):
    """Adds `feed_fn()` (a feed_dict) to every run."""

    def __init__(self, feed_fn):
        self.feed_fn = feed_fn

    def before_run(self, run_context):
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())
