"""tf.summary (TensorFlow 1.x): summary ops, FileWriter and the protos.

    tf.summary.scalar("loss", loss)
    merged = tf.summary.merge_all()
    with tf.summary.FileWriter("/tmp/logs", sess.graph) as writer:
        writer.add_summary(sess.run(merged), step)

Names are declared where each is defined (@tf_export("summary.<name>"),
see framework/api_export.py).
"""

from tensorweave.framework import api_export as _api_export
from tensorweave.proto.event_pb2 import Event, SessionLog, TaggedRunMetadata  # noqa: F401
from tensorweave.proto.summary_pb2 import (  # noqa: F401
    Summary,
    SummaryDescription,
    SummaryMetadata,
)
from tensorweave.summary import record_io as _record_io  # noqa: F401
from tensorweave.summary import summary_ops as _summary_ops  # noqa: F401
from tensorweave.summary import writer as _writer  # noqa: F401

globals().update(_api_export.exported_names("summary"))

from tensorweave.framework import missing_names as _missing_names

# A public name tensorweave lacks raises an AttributeError that says so.
__getattr__ = _missing_names.module_getattr(__name__)
