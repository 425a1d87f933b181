"""tf.python_io: TFRecord files (TFRecordWriter, tf_record_iterator, TFRecordOptions).
Its names are declared where each is defined (@tf_export("python_io.<name>"),
see framework/api_export.py)."""

from tensorweave.framework import api_export as _api_export

# The modules that declare these names (tensorweave.summary.record_io) are
# imported by the package (tensorweave/__init__.py) before this module.
globals().update(_api_export.exported_names("python_io"))

from tensorweave.framework import missing_names as _missing_names

# A public name tensorweave lacks raises an AttributeError that says so.
__getattr__ = _missing_names.module_getattr(__name__)
