"""tf.train.SessionManager: creates a session whose model is ready to use.

    sm = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables())
    # The chief: restores the latest checkpoint of `ckpt_dir`, else runs init_op.
    sess = sm.prepare_session(master, init_op=init_op, saver=saver, checkpoint_dir=ckpt_dir)
    # Another worker: polls, every recovery_wait_secs, until the chief has done so.
    sess = sm.wait_for_session(master, max_wait_secs=600)

"Ready" is decided by ops that report what is missing: `ready_op` (usually
tf.report_uninitialized_variables()) must return an empty string vector before
the model is used, and `ready_for_local_init_op` must before `local_init_op`
(local variables, tables) runs. A session is created through tf.Session, so
`master` is any target tf.Session accepts ("" for in-process, "grpc://...").
"""

import logging
import time

import numpy as np

from tensorweave.client import session
from tensorweave.framework import errors, ops
from tensorweave.train import checkpoint_management

__all__ = ["SessionManager"]

_log = logging.getLogger("tensorweave")


class SessionManager:
    """Creates sessions that are initialized, restored, or waited for until ready."""

    def __init__(
        self,
        local_init_op=None,
        ready_op=None,
        ready_for_local_init_op=None,
        graph=None,
        recovery_wait_secs=30,
        local_init_run_options=None,
        local_init_feed_dict=None,
    ):
        if ready_for_local_init_op is not None and local_init_op is None:
            raise ValueError(
                "If you pass a ready_for_local_init_op you must also pass a local_init_op "
                f", ready_for_local_init_op [{ready_for_local_init_op}]"
            )
        self._local_init_op = local_init_op
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._graph = graph if graph is not None else ops.get_default_graph()
        self._recovery_wait_secs = recovery_wait_secs
        self._local_init_run_options = local_init_run_options
        self._local_init_feed_dict = local_init_feed_dict
        self._target = None

    # --- creating sessions ----------------------------------------------------------------

    def _restore_checkpoint(
        self,
        master,
        saver=None,
        checkpoint_dir=None,
        checkpoint_filename_with_path=None,
        wait_for_checkpoint=False,
        max_wait_secs=7200,
        config=None,
    ):
        """A new session and whether a checkpoint was restored into it."""
        if checkpoint_dir and checkpoint_filename_with_path:
            raise ValueError(
                "Can not provide both checkpoint_dir and checkpoint_filename_with_path."
            )
        self._target = master
        sess = session.Session(self._target, graph=self._graph, config=config)
        if not saver or not (checkpoint_dir or checkpoint_filename_with_path):
            return sess, False
        if checkpoint_filename_with_path:
            saver.restore(sess, checkpoint_filename_with_path)
            return sess, True
        waited = 0
        state = checkpoint_management.get_checkpoint_state(checkpoint_dir)
        while not state or not state.model_checkpoint_path:
            if not wait_for_checkpoint or waited >= max_wait_secs:
                return sess, False
            _log.info("Waiting for checkpoint to be available.")
            time.sleep(self._recovery_wait_secs)
            waited += self._recovery_wait_secs
            state = checkpoint_management.get_checkpoint_state(checkpoint_dir)
        saver.restore(sess, state.model_checkpoint_path)
        saver.recover_last_checkpoints(list(state.all_model_checkpoint_paths))
        return sess, True

    def prepare_session(
        self,
        master,
        init_op=None,
        saver=None,
        checkpoint_dir=None,
        checkpoint_filename_with_path=None,
        wait_for_checkpoint=False,
        max_wait_secs=7200,
        config=None,
        init_feed_dict=None,
        init_fn=None,
    ):
        """A session on `master` restored from the latest checkpoint of
        `checkpoint_dir` (or `checkpoint_filename_with_path`), else initialized
        by `init_op` then `init_fn(sess)`; then local_init_op. RuntimeError when
        the model is still not ready (ready_op reports something)."""
        sess, restored = self._restore_checkpoint(
            master,
            saver,
            checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path,
            wait_for_checkpoint=wait_for_checkpoint,
            max_wait_secs=max_wait_secs,
            config=config,
        )
        try:
            if not restored:
                if init_op is None and not init_fn and self._local_init_op is None:
                    raise RuntimeError(
                        "Model is not initialized and no init_op or init_fn or local_init_op was given"
                    )
                if init_op is not None:
                    sess.run(init_op, feed_dict=init_feed_dict)
                if init_fn:
                    init_fn(sess)
            local_init_done, message = self._try_run_local_init_op(sess)
            if not local_init_done:
                raise RuntimeError(
                    "Init operations did not make model ready for local_init.  Init op: "
                    f"{_name_of(init_op)}, init fn: {init_fn}, error: {message}"
                )
            ready, message = self._model_ready(sess)
            if not ready:
                raise RuntimeError(
                    f"Init operations did not make model ready.  Init op: {_name_of(init_op)}, "
                    f"init fn: {init_fn}, local_init_op: {self._local_init_op}, error: {message}"
                )
        except BaseException:
            # The caller never sees this session: close it rather than leak it.
            _close_quietly(sess)
            raise
        return sess

    def recover_session(
        self,
        master,
        saver=None,
        checkpoint_dir=None,
        checkpoint_filename_with_path=None,
        wait_for_checkpoint=False,
        max_wait_secs=7200,
        config=None,
    ):
        """(session, True) when a checkpoint restored the model and made it
        ready, else (session, False): the caller initializes it."""
        sess, restored = self._restore_checkpoint(
            master,
            saver,
            checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path,
            wait_for_checkpoint=wait_for_checkpoint,
            max_wait_secs=max_wait_secs,
            config=config,
        )
        local_init_done, message = self._try_run_local_init_op(sess)
        if not restored:
            return sess, False
        source = checkpoint_dir or checkpoint_filename_with_path
        if not local_init_done:
            _log.info(
                "Restoring model from %s did not make model ready for local init: %s",
                source,
                message,
            )
            return sess, False
        ready, message = self._model_ready(sess)
        if not ready:
            _log.info("Restoring model from %s did not make model ready: %s", source, message)
            return sess, False
        _log.info("Restored model from %s", source)
        return sess, True

    def wait_for_session(self, master, config=None, max_wait_secs=float("Inf")):
        """A session on `master` once another process (the chief) has made the
        model ready: checks every recovery_wait_secs, each time on a new
        session, and raises DeadlineExceededError when the next check would
        come after max_wait_secs."""
        self._target = master
        if max_wait_secs is None:
            max_wait_secs = float("Inf")
        deadline = time.monotonic() + max_wait_secs
        while True:
            sess = session.Session(self._target, graph=self._graph, config=config)
            ready_message = None
            try:
                local_init_done, local_message = self._try_run_local_init_op(sess)
                if local_init_done:
                    ready, ready_message = self._model_ready(sess)
                    if ready:
                        return sess
            except BaseException:
                _close_quietly(sess)
                raise
            _close_quietly(sess)
            if deadline - time.monotonic() - self._recovery_wait_secs < 0:
                raise errors.DeadlineExceededError(
                    None, None, f"Session was not ready after waiting {int(max_wait_secs)} secs."
                )
            _log.info(
                "Waiting for model to be ready.  Ready_for_local_init_op:  %s, ready: %s",
                local_message,
                ready_message,
            )
            time.sleep(self._recovery_wait_secs)

    # --- readiness ------------------------------------------------------------------------

    def _model_ready(self, sess):
        return _ready(self._ready_op, sess, "Model not ready")

    def _model_ready_for_local_init(self, sess):
        return _ready(self._ready_for_local_init_op, sess, "Model not ready for local init")

    def _try_run_local_init_op(self, sess):
        """(True, None) after running local_init_op (or when there is none);
        (False, why) when ready_for_local_init_op reports something missing."""
        if self._local_init_op is None:
            return True, None
        ready, message = self._model_ready_for_local_init(sess)
        if not ready:
            return False, message
        _log.info("Running local_init_op.")
        sess.run(
            self._local_init_op,
            feed_dict=self._local_init_feed_dict,
            options=self._local_init_run_options,
        )
        _log.info("Done running local_init_op.")
        return True, None


def _ready(op, sess, what):
    """(True, None) when `op` is None or reports nothing (an empty vector);
    else (False, "Variables not initialized: a, b")."""
    if op is None:
        return True, None
    try:
        value = sess.run(op)
    except errors.FailedPreconditionError as error:
        # A ready op that reads a variable fails this way while it is uninitialized.
        if "uninitialized" not in str(error):
            _log.warning("%s : error [%s]", what, error)
            raise
        return False, str(error)
    value = None if value is None else np.asarray(value)
    if value is None or value.dtype == np.int32 or value.size == 0:
        return True, None
    names = ", ".join(v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in value.flat)
    return False, "Variables not initialized: " + names


def _name_of(op):
    return op.name if op is not None else None


def _close_quietly(sess):
    try:
        sess.close()
    except Exception:  # noqa: BLE001 -- a session already failing may fail to close too
        _log.debug("Ignoring an error while closing a session", exc_info=True)
