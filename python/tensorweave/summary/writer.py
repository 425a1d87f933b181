"""tf.summary.FileWriter: events for TensorBoard, written to
`<logdir>/events.out.tfevents.<seconds>.<hostname><suffix>` as TensorFlow
names them. The first record of each file is the Event "brain.Event:2";
each later one holds a Summary, a graph, a meta graph, a SessionLog or a
run's metadata. Records are framed by the runtime (record_io.py).

    with tf.summary.FileWriter("/tmp/logs", sess.graph) as writer:
        for step in range(100):
            summary, _ = sess.run([merged, train_op])
            writer.add_summary(summary, step)

As in TensorFlow, add_* calls put events on a queue of `max_queue` that a
background thread writes, flushing at least every `flush_secs` seconds;
flush() returns once everything added before it is on disk.
"""

import os
import queue
import socket
import threading
import time
import typing
import warnings

from tensorweave.framework import ops
from tensorweave.framework.api_export import tf_export
from tensorweave.proto import event_pb2, graph_pb2, meta_graph_pb2, summary_pb2
from tensorweave.summary.record_io import TFRecordWriter

_FILE_VERSION = "brain.Event:2"


class EventFileWriter:
    """Writes Event protos to a new event file in `logdir` from a background
    thread. After close() nothing is written until reopen(); the next event
    then starts a new file."""

    def __init__(self, logdir, max_queue=10, flush_secs=120, filename_suffix=None):
        self._logdir = os.fspath(logdir)
        os.makedirs(self._logdir, exist_ok=True)
        self._max_queue = max_queue
        self._flush_secs = flush_secs
        self._filename_suffix = filename_suffix or ""
        self._records = None
        self._path = None
        # As TensorFlow's EventsWriter: a suffix creates the file at once,
        # otherwise the first event does (a writer never used leaves none).
        if self._filename_suffix:
            self._open_file()
        self._start()

    def _open_file(self):
        seconds = int(time.time())
        name = f"events.out.tfevents.{seconds:010d}.{socket.gethostname()}{self._filename_suffix}"
        self._path = os.path.join(self._logdir, name)
        self._records = TFRecordWriter(self._path)
        version = event_pb2.Event(wall_time=float(seconds), file_version=_FILE_VERSION)
        self._records.write(version.SerializeToString())
        self._records.flush()

    def _start(self):
        self._queue = queue.Queue(max(self._max_queue, 1))
        self._failure = None
        self._thread = threading.Thread(
            target=self._write_loop, name="EventFileWriter", daemon=True
        )
        self._thread.start()
        self._closed = False

    def get_logdir(self):
        return self._logdir

    @property
    def path(self):
        """The event file being written (None before the first event)."""
        return self._path

    def add_event(self, event):
        if not self._closed:
            self._put(event.SerializeToString())

    def flush(self):
        if self._closed:
            return
        done = threading.Event()
        self._put(done)
        done.wait()
        self._raise_failure()

    def close(self):
        """Writes what is queued, stops the thread and closes the file; a
        write that failed is raised then, with everything already closed."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(None)  # the thread writes what is queued before it, flushes, stops
        self._thread.join()
        records, self._records = self._records, None
        if records is not None:
            records.close()
        self._raise_failure()

    def reopen(self):
        """Starts again; the next event goes to a new file."""
        if self._closed:
            self._start()

    def _put(self, item):
        self._raise_failure()
        self._queue.put(item)

    def _raise_failure(self):
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure

    # The background thread: writes records as they come, flushes on a
    # flush request, on close, and when flush_secs have passed.
    def _write_loop(self):
        next_flush = time.monotonic() + self._flush_secs
        while True:
            try:
                item = self._queue.get(timeout=max(next_flush - time.monotonic(), 0.0))
            except queue.Empty:
                item = _TIMER
            try:
                if isinstance(item, bytes):
                    if self._records is None:
                        self._open_file()
                    self._records.write(item)
                elif self._records is not None:
                    self._records.flush()
                    next_flush = time.monotonic() + self._flush_secs
            except Exception as error:  # noqa: BLE001 (raised by the next add_event or flush)
                self._failure = error
            if isinstance(item, threading.Event):
                item.set()
            if item is None:
                return


_TIMER = object()


@tf_export("summary.FileWriter")
class FileWriter:
    """Writes summaries, graphs and run metadata to an event file in `logdir`
    (created if missing). With `graph`, its GraphDef (with shapes) and a
    MetaGraphDef holding it are written first, as TensorFlow does."""

    def __init__(
        self,
        logdir,
        graph=None,
        max_queue=10,
        flush_secs=120,
        graph_def=None,
        filename_suffix=None,
        session=None,
    ):
        if session is not None:
            raise NotImplementedError("FileWriter(session=...) writes through summary ops of TF 2")
        self.event_writer = EventFileWriter(logdir, max_queue, flush_secs, filename_suffix)
        self._closed = False
        self._seen_summary_tags = set()
        self._session_run_tags = {}
        if graph is not None or graph_def is not None:
            self.add_graph(graph=graph, graph_def=graph_def)
            as_def = graph.as_graph_def(add_shapes=True) if isinstance(graph, ops.Graph) else graph
            self.add_meta_graph(meta_graph_pb2.MetaGraphDef(graph_def=graph_def or as_def))

    def __enter__(self):
        return self

    def __exit__(self, *unused):
        self.close()

    def get_logdir(self):
        return self.event_writer.get_logdir()

    def add_summary(self, summary, global_step=None):
        """Adds a Summary (or its serialized bytes, as a summary op returns
        it). A value's metadata is kept only the first time its tag appears."""
        if isinstance(summary, bytes):
            parsed = summary_pb2.Summary()
            parsed.ParseFromString(summary)
            summary = parsed
        for value in summary.value:
            if not value.HasField("metadata"):
                continue
            if value.tag in self._seen_summary_tags:
                value.ClearField("metadata")
            else:
                self._seen_summary_tags.add(value.tag)
        self._add_event(event_pb2.Event(summary=summary), global_step)

    def add_session_log(self, session_log, global_step=None):
        self._add_event(event_pb2.Event(session_log=session_log), global_step)

    def add_graph(self, graph, global_step=None, graph_def=None):
        """Adds a Graph's GraphDef (with output shapes), or a GraphDef."""
        if graph is not None and graph_def is not None:
            raise ValueError("Please pass only graph, or graph_def (deprecated), but not both.")
        if isinstance(graph_def, ops.Graph):
            graph, graph_def = graph_def, None
        if isinstance(graph, ops.Graph):
            true_graph_def = graph.as_graph_def(add_shapes=True)
        elif isinstance(graph, graph_pb2.GraphDef):
            true_graph_def = graph
        elif isinstance(graph_def, graph_pb2.GraphDef):
            true_graph_def = graph_def
        else:
            raise TypeError(
                "The passed graph must be an instance of `Graph` or the deprecated `GraphDef`"
            )
        event = event_pb2.Event(graph_def=true_graph_def.SerializeToString())
        self._add_event(event, global_step)

    def add_meta_graph(self, meta_graph_def, global_step=None):
        if not isinstance(meta_graph_def, meta_graph_pb2.MetaGraphDef):
            raise TypeError(
                f"meta_graph_def must be type MetaGraphDef, saw type: {type(meta_graph_def)}"
            )
        event = event_pb2.Event(meta_graph_def=meta_graph_def.SerializeToString())
        self._add_event(event, global_step)

    def add_run_metadata(self, run_metadata, tag, global_step=None):
        """Adds a RunMetadata (kept serialized) under `tag`, once per tag."""
        if tag in self._session_run_tags:
            raise ValueError("The provided tag was already used for this event type")
        self._session_run_tags[tag] = True
        tagged = event_pb2.TaggedRunMetadata(tag=tag, run_metadata=run_metadata.SerializeToString())
        self._add_event(event_pb2.Event(tagged_run_metadata=tagged), global_step)

    def add_event(self, event):
        """Adds an Event as given (wall_time and step are the caller's)."""
        self._warn_if_closed()
        self.event_writer.add_event(event)

    def flush(self):
        self._warn_if_closed()
        self.event_writer.flush()

    def close(self):
        self._closed = True
        self.event_writer.close()

    def reopen(self):
        """After close(): writes again, to a new event file."""
        self.event_writer.reopen()
        self._closed = False

    def _add_event(self, event, step):
        self._warn_if_closed()
        event.wall_time = time.time()
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def _warn_if_closed(self):
        if self._closed:
            warnings.warn(
                "Attempting to use a closed FileWriter. The operation will be a noop unless "
                "the FileWriter is explicitly reopened."
            )


@tf_export("summary.FileWriterCache")
class FileWriterCache:
    """One FileWriter per log directory, shared by whoever asks for it."""

    _cache: typing.ClassVar[dict] = {}
    _lock = threading.RLock()

    @staticmethod
    def clear():
        """Closes and forgets every cached writer."""
        with FileWriterCache._lock:
            for writer in FileWriterCache._cache.values():
                writer.close()
            FileWriterCache._cache = {}

    @staticmethod
    def get(logdir):
        """The writer of `logdir`, made (with the default graph) on first use."""
        with FileWriterCache._lock:
            if logdir not in FileWriterCache._cache:
                FileWriterCache._cache[logdir] = FileWriter(logdir, graph=ops.get_default_graph())
            return FileWriterCache._cache[logdir]
