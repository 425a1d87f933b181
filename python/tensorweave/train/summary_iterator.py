"""tf.train.summary_iterator: the Event protos of an event file, in order.

for event in tf.train.summary_iterator(path):
    for value in event.summary.value:
        print(event.step, value.tag, value.simple_value)
"""

from tensorweave.proto import event_pb2
from tensorweave.summary.record_io import tf_record_iterator

__all__ = ["summary_iterator"]


def summary_iterator(path):
    """Yields each record of the event file `path` parsed as an Event."""
    for record in tf_record_iterator(path):
        yield event_pb2.Event.FromString(record)
