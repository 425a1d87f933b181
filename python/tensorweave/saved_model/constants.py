"""tf.saved_model.constants: the names of a SavedModel directory's files
and of the collections and signature keys its loader reads. The values are
TensorFlow's (tensorflow/cc/saved_model/constants.h), so each side finds
what the other wrote."""

from tensorweave.framework.api_export import export_value

# The subdirectory holding files (vocabularies, ...) the graph reads.
ASSETS_DIRECTORY = export_value("assets", "saved_model.ASSETS_DIRECTORY")
# The subdirectory for files a program keeps beside the model, not loaded.
EXTRA_ASSETS_DIRECTORY = "assets.extra"
# The collection of Any-packed AssetFileDefs (TensorFlow 1.x builders).
ASSETS_KEY = export_value("saved_model_assets", "saved_model.ASSETS_KEY")
# Collections holding the op run after the variables are restored.
LEGACY_INIT_OP_KEY = export_value("legacy_init_op", "saved_model.LEGACY_INIT_OP_KEY")
MAIN_OP_KEY = export_value("saved_model_main_op", "saved_model.MAIN_OP_KEY")
TRAIN_OP_KEY = "saved_model_train_op"
# Signature keys reserved for the init and train ops (TensorFlow 2 builders).
INIT_OP_SIGNATURE_KEY = "__saved_model_init_op"
TRAIN_OP_SIGNATURE_KEY = "__saved_model_train_op"

SAVED_MODEL_SCHEMA_VERSION = export_value(1, "saved_model.SAVED_MODEL_SCHEMA_VERSION")
SAVED_MODEL_FILENAME_PREFIX = "saved_model"
SAVED_MODEL_FILENAME_PB = export_value("saved_model.pb", "saved_model.SAVED_MODEL_FILENAME_PB")
SAVED_MODEL_FILENAME_PBTXT = export_value(
    "saved_model.pbtxt", "saved_model.SAVED_MODEL_FILENAME_PBTXT"
)
DEBUG_DIRECTORY = export_value("debug", "saved_model.DEBUG_DIRECTORY")
DEBUG_INFO_FILENAME_PB = export_value(
    "saved_model_debug_info.pb", "saved_model.DEBUG_INFO_FILENAME_PB"
)
# The variables are the checkpoint <export_dir>/variables/variables.
VARIABLES_DIRECTORY = export_value("variables", "saved_model.VARIABLES_DIRECTORY")
VARIABLES_FILENAME = export_value("variables", "saved_model.VARIABLES_FILENAME")

# TensorFlow's GraphKeys.ASSET_FILEPATHS: the asset path tensors simple_save
# ships with the model.
ASSET_FILEPATHS_COLLECTION = "asset_filepaths"
# TensorFlow's GraphKeys.TABLE_INITIALIZERS, run by main_op.
TABLE_INITIALIZERS_COLLECTION = "table_initializer"

__all__ = [
    "ASSETS_DIRECTORY",
    "ASSETS_KEY",
    "DEBUG_DIRECTORY",
    "DEBUG_INFO_FILENAME_PB",
    "LEGACY_INIT_OP_KEY",
    "MAIN_OP_KEY",
    "SAVED_MODEL_FILENAME_PB",
    "SAVED_MODEL_FILENAME_PBTXT",
    "SAVED_MODEL_SCHEMA_VERSION",
    "VARIABLES_DIRECTORY",
    "VARIABLES_FILENAME",
]


def variables_path(export_dir):
    """The checkpoint prefix of a SavedModel's variables."""
    import os

    return os.path.join(os.fspath(export_dir), VARIABLES_DIRECTORY, VARIABLES_FILENAME)


def assets_directory(export_dir):
    import os

    return os.path.join(os.fspath(export_dir), ASSETS_DIRECTORY)
