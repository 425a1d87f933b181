"""Scenarios of MonitoredSession, run the same way on TensorFlow and on tensorweave.

Each scenario takes a `tf` module (tensorweave, or tensorflow.compat.v1 in
graph mode) and a fresh directory, and returns plain data: the hooks' calls
in order, the steps at which things happened, the global step at the end.
test_monitored_session.py runs them on tensorweave and compares with
monitored_session_reference.json, which this file writes when run with real
TensorFlow (the project never imports it):

    /work/tfvenv/bin/python tests/python/monitored_session_reference.py
"""

import json
import os
import sys
import tempfile
import types

import numpy as np

REFERENCE_FILE = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "monitored_session_reference.json"
)


def linear_regression(tf):
    """y = 3x + 1 fitted by gradient descent: train_op, feeds, w, b, step, loss."""
    x = tf.placeholder(tf.float32, [None], name="x")
    y = tf.placeholder(tf.float32, [None], name="y")
    w = tf.Variable(0.0, name="w")
    b = tf.Variable(0.0, name="b")
    loss = tf.reduce_mean(tf.square(w * x + b - y))
    global_step = tf.train.get_or_create_global_step()
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
    xs = np.linspace(-1.0, 1.0, 16).astype(np.float32)
    feeds = {x: xs, y: 3.0 * xs + 1.0}
    return types.SimpleNamespace(
        train_op=train_op, feeds=feeds, w=w, b=b, step=global_step, loss=loss
    )


def recording_hook_class(tf):
    """A hook that records its calls (and the global step it saw after each run)
    into `events`; it raises `error_type` once, in after_run of run number
    `raise_at_run`, or requests a stop after run `stop_at_run`."""

    class RecordingHook(tf.train.SessionRunHook):
        def __init__(
            self, events, name="hook", stop_at_run=None, raise_at_run=None, error_type=None
        ):
            self.events, self.name = events, name
            self.stop_at_run, self.raise_at_run, self.error_type = (
                stop_at_run,
                raise_at_run,
                error_type,
            )
            self.runs = 0

        def begin(self):
            self.step = tf.train.get_global_step()
            self.events.append(f"{self.name}.begin")

        def after_create_session(self, session, coord):
            self.events.append(
                f"{self.name}.after_create_session step={int(session.run(self.step))}"
            )

        def before_run(self, run_context):
            self.events.append(f"{self.name}.before_run")
            return tf.train.SessionRunArgs({"step": self.step})

        def after_run(self, run_context, run_values):
            self.runs += 1
            self.events.append(f"{self.name}.after_run fetched={sorted(run_values.results)}")
            if self.runs == self.raise_at_run:
                self.events.append(f"{self.name}.raise {self.error_type.__name__}")
                raise self.error_type(None, None, "injected by the test")
            if self.runs == self.stop_at_run:
                run_context.request_stop()

        def end(self, session):
            self.events.append(f"{self.name}.end step={int(session.run(self.step))}")

    return RecordingHook


def scenario_stop_at_step(tf, directory):
    """StopAtStepHook(last_step=1000): how many runs, the final step and fit."""
    model = linear_regression(tf)
    train_op, feeds = model.train_op, model.feeds
    runs = 0
    final = tf.train.FinalOpsHook([model.step, model.w, model.b])
    hooks = [tf.train.StopAtStepHook(last_step=1000), final]
    with tf.train.MonitoredTrainingSession(hooks=hooks) as sess:
        while not sess.should_stop():
            result = sess.run(train_op, feed_dict=feeds)
            runs += 1
    final_step, final_w, final_b = final.final_ops_values
    return {
        "runs": runs,
        "last_result": repr(result),
        "final_step": int(final_step),
        "w_b": [float(final_w), float(final_b)],
    }


def scenario_hook_order(tf, directory):
    """Two hooks around StopAtStepHook(num_steps=3)."""
    events = []
    hook_class = recording_hook_class(tf)
    model = linear_regression(tf)
    train_op, feeds = model.train_op, model.feeds
    hooks = [hook_class(events, "a"), tf.train.StopAtStepHook(num_steps=3), hook_class(events, "b")]
    with tf.train.MonitoredSession(hooks=hooks) as sess:
        while not sess.should_stop():
            result = sess.run(train_op, feed_dict=feeds)
            events.append(f"caller got {result!r}")
    return {"events": events}


def scenario_request_stop(tf, directory):
    """A hook that requests a stop after its third run."""
    events = []
    model = linear_regression(tf)
    train_op, feeds = model.train_op, model.feeds
    hook = recording_hook_class(tf)(events, stop_at_run=3)
    runs = 0
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        while not sess.should_stop():
            sess.run(train_op, feed_dict=feeds)
            runs += 1
    return {"runs": runs, "events": events}


def scenario_checkpoints_and_restore(tf, directory):
    """Saves every 3 steps up to step 10, then a second session on the same
    directory restores step 10 and trains 4 more steps."""
    model = linear_regression(tf)
    train_op, feeds = model.train_op, model.feeds

    class Listener(tf.train.CheckpointSaverListener):
        def __init__(self):
            self.saved = []

        def after_save(self, session, global_step_value):
            self.saved.append(int(global_step_value))

    listener = Listener()
    saver_hook = tf.train.CheckpointSaverHook(directory, save_steps=3, listeners=[listener])
    with tf.train.MonitoredTrainingSession(
        checkpoint_dir=directory,
        save_checkpoint_secs=None,
        hooks=[tf.train.StopAtStepHook(last_step=10), saver_hook],
    ) as sess:
        while not sess.should_stop():
            sess.run(train_op, feed_dict=feeds)
    state = tf.train.get_checkpoint_state(directory)
    first = {
        "saved": listener.saved,
        "latest": os.path.basename(state.model_checkpoint_path),
        "kept": [os.path.basename(p) for p in state.all_model_checkpoint_paths],
    }
    events = []
    hook = recording_hook_class(tf)(events)
    with tf.train.MonitoredTrainingSession(
        checkpoint_dir=directory, hooks=[tf.train.StopAtStepHook(num_steps=4), hook]
    ) as sess:
        while not sess.should_stop():
            sess.run(train_op, feed_dict=feeds)
    state = tf.train.get_checkpoint_state(directory)
    return {
        "first": first,
        "second_events": events,
        "second_latest": os.path.basename(state.model_checkpoint_path),
    }


def scenario_out_of_range(tf, directory):
    """OutOfRangeError raised in the second run ends the `with` block cleanly (end() runs)."""
    events = []
    model = linear_regression(tf)
    train_op, feeds = model.train_op, model.feeds
    hook = recording_hook_class(tf)(events, raise_at_run=2, error_type=tf.errors.OutOfRangeError)
    runs = 0
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        while not sess.should_stop():
            sess.run(train_op, feed_dict=feeds)
            runs += 1
    return {"runs": runs, "events": events}


def scenario_aborted_is_retried(tf, directory):
    """AbortedError in run 5 (after the step ran): the session is recreated
    from the latest checkpoint (step 4) and training goes on to step 8."""
    events = []
    model = linear_regression(tf)
    train_op, feeds = model.train_op, model.feeds
    hook = recording_hook_class(tf)(events, raise_at_run=5, error_type=tf.errors.AbortedError)
    runs = 0
    with tf.train.MonitoredTrainingSession(
        checkpoint_dir=directory,
        save_checkpoint_steps=2,
        hooks=[hook, tf.train.StopAtStepHook(last_step=8)],
    ) as sess:
        while not sess.should_stop():
            sess.run(train_op, feed_dict=feeds)
            runs += 1
    return {"runs": runs, "events": events}


def scenario_preemption_reported_to_the_coordinator(tf, directory):
    """A run fails (ValueError from a hook) after a thread reported an
    AbortedError to the coordinator: the preemption wins, the session is
    recreated and the run retried."""
    events = []
    model = linear_regression(tf)
    train_op, feeds = model.train_op, model.feeds

    class ReportsPreemption(tf.train.SessionRunHook):
        def after_create_session(self, session, coord):
            self.coord = coord
            events.append("after_create_session")

        def after_run(self, run_context, run_values):
            if len(events) == 2:  # the second run of the first session
                events.append("reporting")
                self.coord.request_stop(
                    (
                        tf.errors.AbortedError,
                        tf.errors.AbortedError(None, None, "ps restarted"),
                        None,
                    )
                )
                raise ValueError("the run failed too")
            events.append("after_run")

    runs = 0
    with tf.train.MonitoredSession(
        hooks=[ReportsPreemption(), tf.train.StopAtStepHook(last_step=3)]
    ) as sess:
        while not sess.should_stop():
            sess.run(train_op, feed_dict=feeds)
            runs += 1
    return {"runs": runs, "events": events}


SCENARIOS = {
    name[len("scenario_") :]: function
    for name, function in sorted(globals().items())
    if name.startswith("scenario_")
}


def run_scenario(tf, name):
    tf.reset_default_graph()
    with tempfile.TemporaryDirectory() as directory:
        return SCENARIOS[name](tf, directory)


def main():
    import tensorflow.compat.v1 as tf

    tf.disable_eager_execution()
    tf.logging.set_verbosity(tf.logging.ERROR)
    reference = {name: run_scenario(tf, name) for name in SCENARIOS}
    reference["_generated_by"] = f"tensorflow {tf.VERSION}, {os.path.basename(__file__)}"
    with open(REFERENCE_FILE, "w") as f:
        json.dump(reference, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {REFERENCE_FILE}", file=sys.stderr)


if __name__ == "__main__":
    main()
