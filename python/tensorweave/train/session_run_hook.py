"""SessionRunHook: code that runs around every `run` of a MonitoredSession.

    class PrintLoss(tf.train.SessionRunHook):
        def before_run(self, run_context):
            return tf.train.SessionRunArgs(loss)           # fetched with the caller's run
        def after_run(self, run_context, run_values):
            print(run_values.results)                      # the value of `loss`

    with tf.train.MonitoredSession(hooks=[PrintLoss()]) as sess:
        sess.run(train_op)

The order of calls (TensorFlow 1.x's, which MonitoredSession follows):

    begin()                                   once, the graph may still change
    after_create_session(session, coord)      after each session is created and initialized
    for each run:
        before_run(run_context)  -> SessionRunArgs or None, for every hook, in list order
        the run itself: the caller's fetches plus every hook's
        after_run(run_context, run_values)    for every hook, in list order
    end(session)                              when the MonitoredSession is closed normally

A hook's fetches travel in the same `Session.run` as the caller's and its
results go only to that hook: what the caller gets back is unchanged.
"""

import collections

__all__ = [
    "SessionRunArgs",
    "SessionRunContext",
    "SessionRunHook",
    "SessionRunValues",
]


class SessionRunHook:
    """Base class of the hooks: every method does nothing, override the ones you need."""

    def begin(self):
        """Called once before the session is created; may still add ops to the graph."""

    def after_create_session(self, session, coord):
        """Called when a session has been created and initialized (again after each
        recovery); the graph is finalized by then. `coord` is the session's Coordinator."""

    def before_run(self, run_context):
        """Called before each run; returns None or SessionRunArgs to add to the run."""
        return

    def after_run(self, run_context, run_values):
        """Called after each successful run with what the hook asked for
        (`run_values.results`); may call `run_context.request_stop()`."""

    def end(self, session):
        """Called when the MonitoredSession is closed without an error."""


class SessionRunArgs(collections.namedtuple("SessionRunArgs", ["fetches", "feed_dict", "options"])):
    """What a hook adds to a run: fetches (any structure Session.run accepts),
    a feed_dict, and RunOptions merged into the run's options."""

    def __new__(cls, fetches, feed_dict=None, options=None):
        return super().__new__(cls, fetches, feed_dict, options)


class SessionRunContext:
    """What a hook learns about the run it surrounds: the caller's arguments,
    the session (to run more ops itself) and a way to ask the loop to stop."""

    def __init__(self, original_args, session):
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self):
        """SessionRunArgs(fetches, feed_dict) the caller passed to run."""
        return self._original_args

    @property
    def session(self):
        """The session the run goes to (a hook may run other ops on it)."""
        return self._session

    @property
    def stop_requested(self):
        return self._stop_requested

    def request_stop(self):
        """After this run, MonitoredSession.should_stop() becomes True."""
        self._stop_requested = True


class SessionRunValues(
    collections.namedtuple("SessionRunValues", ["results", "options", "run_metadata"])
):
    """What after_run receives: the values of the hook's own fetches (None when
    it asked for none), the run's RunOptions and its RunMetadata (None: runs do
    not collect metadata here)."""
