"""tf.train.Coordinator: one stop flag shared by a training loop and its threads.

    coord = tf.train.Coordinator()
    threads = [threading.Thread(target=work, args=(coord,)) for _ in range(4)]
    for t in threads: t.start()
    ...
    coord.request_stop()          # or a thread calls it, with the exception that ended it
    coord.join(threads)           # re-raises that exception here

MonitoredSession keeps one per session and gives it to the hooks'
after_create_session; a hook or a thread that calls request_stop(ex) stops
the loop, and the exception surfaces in the next run.
"""

import contextlib
import logging
import sys
import threading
import time

from tensorweave.framework import errors

__all__ = ["Coordinator"]

_log = logging.getLogger("tensorweave")


class Coordinator:
    """A stop request and the first exception that caused one."""

    def __init__(self, clean_stop_exception_types=None):
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info_to_raise = None
        self._joined = False
        self._registered_threads = set()

    def request_stop(self, ex=None):
        """Asks everyone to stop. `ex` (an exception or sys.exc_info() triple) is
        kept, unless it is a clean-stop type, and raised by join() and by
        raise_requested_exception(); only the first one is kept."""
        with self._lock:
            ex = self._filter_exception(ex)
            if self._joined:
                if isinstance(ex, tuple):
                    _, ex_instance, _ = ex
                else:
                    ex_instance = ex
                if ex_instance is not None:
                    raise ex_instance
                return
            if not self._stop_event.is_set():
                if ex and self._exc_info_to_raise is None:
                    if isinstance(ex, tuple):
                        self._exc_info_to_raise = ex
                    else:
                        self._exc_info_to_raise = (type(ex), ex, ex.__traceback__)
                    _log.info("Error reported to Coordinator: %s", self._exc_info_to_raise[1])
                self._stop_event.set()

    def _filter_exception(self, ex):
        exception = ex[1] if isinstance(ex, tuple) else ex
        if isinstance(exception, self._clean_stop_exception_types):
            return None
        return ex

    def clear_stop(self):
        """Forgets the stop request and its exception (to start threads again)."""
        with self._lock:
            self._joined = False
            self._exc_info_to_raise = None
            if self._stop_event.is_set():
                self._stop_event.clear()

    def should_stop(self):
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self):
        """Inside this block an exception requests a stop instead of propagating."""
        try:
            yield
        except:  # noqa: E722 -- like TensorFlow, any exception (even SystemExit) stops the loop
            self.request_stop(ex=sys.exc_info())

    def wait_for_stop(self, timeout=None):
        """True once a stop is requested, False after `timeout` seconds without one."""
        return self._stop_event.wait(timeout)

    def register_thread(self, thread):
        with self._lock:
            self._registered_threads.add(thread)

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        """Waits for `threads` (and registered ones) to finish once a stop is
        requested; threads still alive `stop_grace_period_secs` after the stop
        are a RuntimeError unless ignore_live_threads. Then re-raises the
        exception given to request_stop, if any."""
        with self._lock:
            threads = set(threads or ()) | self._registered_threads
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(1.0):
            pass
        deadline = time.monotonic() + stop_grace_period_secs
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            if self._exc_info_to_raise:
                _, exception, traceback = self._exc_info_to_raise
                raise exception.with_traceback(traceback)
        stragglers = [t.name for t in threads if t.is_alive()]
        if stragglers:
            if ignore_live_threads:
                _log.info("Coordinator stopped with threads still running: %s", stragglers)
            else:
                raise RuntimeError(f"Coordinator stopped with threads still running: {stragglers}")

    @property
    def joined(self):
        return self._joined

    def raise_requested_exception(self):
        """Raises the exception given to request_stop, if any (else does nothing)."""
        with self._lock:
            if self._exc_info_to_raise:
                _, exception, traceback = self._exc_info_to_raise
                raise exception.with_traceback(traceback)
