"""tf.saved_model.builder.SavedModelBuilder: writes a SavedModel directory.

    builder = tf.saved_model.builder.SavedModelBuilder("export/1")
    with tf.Session() as sess:
        ...                                     # build and train the graph
        builder.add_meta_graph_and_variables(
            sess, [tf.saved_model.tag_constants.SERVING],
            signature_def_map={"serving_default": signature})
    builder.save()                              # export/1/saved_model.pb

The directory holds saved_model.pb (a SavedModel proto: one MetaGraphDef
per set of tags), variables/variables (a checkpoint of the variables, shared
by every meta graph) and assets/ (files the graph reads). It is TensorFlow's
layout, and TensorFlow's tf.compat.v1.saved_model.loader.load reads ours.
"""

import os
import shutil

from google.protobuf import text_format

from tensorweave.framework import ops
from tensorweave.framework.api_export import tf_export
from tensorweave.ops import variables
from tensorweave.proto import meta_graph_pb2, saved_model_pb2, saver_pb2, types_pb2
from tensorweave.saved_model import assets, constants
from tensorweave.train import checkpoint_management, meta_graph

__all__ = ["SavedModelBuilder"]


@tf_export("saved_model.Builder")
class SavedModelBuilder:
    """Builds a SavedModel: the first meta graph with the variables
    (add_meta_graph_and_variables, once), then any number of meta graphs
    sharing them (add_meta_graph), then save()."""

    def __init__(self, export_dir):
        self._saved_model = saved_model_pb2.SavedModel(
            saved_model_schema_version=constants.SAVED_MODEL_SCHEMA_VERSION
        )
        self._export_dir = os.fspath(export_dir)
        if os.path.exists(self._export_dir):
            if os.listdir(self._export_dir):
                raise AssertionError(
                    f"Export directory {self._export_dir} already exists, and isn't empty. "
                    "Please choose a different export directory, or delete all the "
                    "contents of the specified directory."
                )
        else:
            os.makedirs(self._export_dir)
        self._has_saved_variables = False
        self._saved_asset_files = set()

    # --- checks ---------------------------------------------------------------------------

    def _validate_tensor_info(self, tensor_info):
        if tensor_info is None:
            raise AssertionError(
                "All TensorInfo protos used in the SignatureDefs must have the name "
                "and dtype fields set."
            )
        if tensor_info.WhichOneof("encoding") is None:
            raise AssertionError(
                f"Invalid `tensor_info`: {tensor_info}. All TensorInfo protos used "
                "in the SignatureDefs must have one of the 'encoding' fields (e.g., "
                "name or coo_sparse) set."
            )
        if tensor_info.dtype == types_pb2.DT_INVALID:
            raise AssertionError(
                f"Invalid `tensor_info`: {tensor_info}. All TensorInfo protos used in"
                " the SignatureDefs must have the dtype field set."
            )

    def _validate_signature_def_map(self, signature_def_map):
        for signature_def in signature_def_map.values():
            for info in signature_def.inputs.values():
                self._validate_tensor_info(info)
            for info in signature_def.outputs.values():
                self._validate_tensor_info(info)
        for reserved, what in (
            (constants.INIT_OP_SIGNATURE_KEY, "initialization"),
            (constants.TRAIN_OP_SIGNATURE_KEY, "the train op"),
        ):
            if reserved in signature_def_map:
                raise KeyError(
                    f'SignatureDef map key "{reserved}" is reserved for {what}. '
                    "Please use a different key."
                )

    # --- what goes into the graph's collections ---------------------------------------------

    def _add_assets(self, assets_collection):
        """Records each asset path tensor in the assets collection and copies
        its file into assets/ (under its base name, made unique when two
        different files share one)."""
        filename_map = {}  # name in assets/ -> source path
        for asset_tensor in assets_collection or ():
            source = _asset_path_from_tensor(asset_tensor)
            if not source:
                raise ValueError(f"Asset filepath tensor {asset_tensor} in is invalid.")
            filename = _unique_asset_filename(source, filename_map)
            filename_map[filename] = source
            asset_file_def = meta_graph_pb2.AssetFileDef(filename=filename)
            asset_file_def.tensor_info.name = asset_tensor.name
            ops.add_to_collection(constants.ASSETS_KEY, assets.pack_asset_file_def(asset_file_def))
        if not filename_map:
            return
        assets_dir = constants.assets_directory(self._export_dir)
        os.makedirs(assets_dir, exist_ok=True)
        for filename, source in filename_map.items():
            destination = os.path.join(assets_dir, filename)
            if (
                os.path.exists(source)
                and source != destination
                and destination not in self._saved_asset_files
            ):
                shutil.copyfile(source, destination)
                self._saved_asset_files.add(destination)

    def _add_main_op(self, main_op):
        if main_op is None:
            return
        if not isinstance(main_op, ops.Operation):
            raise TypeError(
                f"Expected {main_op} to be an Operation but got type {type(main_op)} instead."
            )
        for key in (constants.MAIN_OP_KEY, constants.LEGACY_INIT_OP_KEY):
            if ops.get_collection(key):
                raise ValueError(
                    f"Graph already contains one or more main ops under the collection {key}."
                )
        ops.add_to_collection(constants.MAIN_OP_KEY, main_op)

    def _default_saver(self, saver):
        if saver:
            return saver
        from tensorweave.train.saver import Saver

        # TensorFlow's builder shards by device and writes the V2 format.
        return Saver(
            variables.global_variables() + ops.get_collection("saveable_objects"),
            sharded=True,
            write_version=saver_pb2.SaverDef.V2,
            allow_empty=True,
        )

    def _add_tagged_meta_graph(self, saver, tags, signature_def_map, clear_devices, strip):
        meta_graph_def = meta_graph.export_meta_graph(
            saver=saver, clear_devices=clear_devices, strip_default_attrs=strip
        )
        meta_graph_def.meta_info_def.tags.extend(tags)
        for key, signature_def in signature_def_map.items():
            meta_graph_def.signature_def[key].CopyFrom(signature_def)
        self._saved_model.meta_graphs.add().CopyFrom(meta_graph_def)

    # --- the public calls ---------------------------------------------------------------------

    def add_meta_graph_and_variables(
        self,
        sess,
        tags,
        signature_def_map=None,
        assets_collection=None,
        legacy_init_op=None,
        clear_devices=False,
        main_op=None,
        strip_default_attrs=False,
        saver=None,
    ):
        """Saves the variables of `sess` to variables/variables and adds the
        default graph as the first meta graph, tagged `tags`. `main_op` (or
        the older name legacy_init_op) runs after the restore when the model
        is loaded; `assets_collection` lists string Const tensors holding
        the paths of files to copy into assets/."""
        if self._has_saved_variables:
            raise AssertionError(
                "Graph state including variables and assets has already been saved. "
                "Please invoke `add_meta_graph()` instead."
            )
        signature_def_map = signature_def_map or {}
        self._validate_signature_def_map(signature_def_map)
        self._add_assets(assets_collection)
        self._add_main_op(main_op if main_op is not None else legacy_init_op)
        os.makedirs(os.path.join(self._export_dir, constants.VARIABLES_DIRECTORY), exist_ok=True)
        saver = self._default_saver(saver)
        saver.save(
            sess,
            constants.variables_path(self._export_dir),
            write_meta_graph=False,
            write_state=False,
        )
        self._add_tagged_meta_graph(
            saver, tags, signature_def_map, clear_devices, strip_default_attrs
        )
        self._has_saved_variables = True

    def add_meta_graph(
        self,
        tags,
        signature_def_map=None,
        assets_collection=None,
        legacy_init_op=None,
        clear_devices=False,
        main_op=None,
        strip_default_attrs=False,
        saver=None,
    ):
        """Adds the default graph as one more meta graph, tagged `tags`, over
        the variables add_meta_graph_and_variables saved."""
        if not self._has_saved_variables:
            raise AssertionError(
                "Graph state including variables and assets has not been saved yet. "
                "Please invoke `add_meta_graph_and_variables()` first."
            )
        signature_def_map = signature_def_map or {}
        self._validate_signature_def_map(signature_def_map)
        self._add_assets(assets_collection)
        self._add_main_op(main_op if main_op is not None else legacy_init_op)
        saver = self._default_saver(saver)
        self._add_tagged_meta_graph(
            saver, tags, signature_def_map, clear_devices, strip_default_attrs
        )

    def save(self, as_text=False):
        """Writes saved_model.pb (or saved_model.pbtxt with as_text) and
        returns its path, as bytes as TensorFlow returns it."""
        os.makedirs(self._export_dir, exist_ok=True)
        if as_text:
            path = os.path.join(self._export_dir, constants.SAVED_MODEL_FILENAME_PBTXT)
            data = text_format.MessageToString(self._saved_model).encode()
        else:
            path = os.path.join(self._export_dir, constants.SAVED_MODEL_FILENAME_PB)
            data = self._saved_model.SerializeToString(deterministic=True)
        checkpoint_management.atomic_write(path, data)
        return path.encode()


def _asset_path_from_tensor(path_tensor):
    """The path a scalar string Const holds (how programs name asset files)."""
    if not isinstance(path_tensor, ops.Tensor):
        raise TypeError(f"Asset path tensor {path_tensor} must be a Tensor.")
    if path_tensor.op.type != "Const":
        raise TypeError(
            f"Asset path tensor {path_tensor} must be of type constant."
            f"Has type {path_tensor.op.type} instead."
        )
    if path_tensor.dtype.base_dtype.name != "string":
        raise TypeError(
            f"Asset path tensor {path_tensor}` must be of dtype string."
            f"Has type {path_tensor.dtype} instead."
        )
    values = path_tensor.op.get_attr("value").string_val
    if len(values) != 1:
        raise TypeError(f"Asset path tensor {path_tensor} must be a scalar.")
    return values[0].decode()


def _unique_asset_filename(source, filename_map):
    """The base name of `source`, or base_1, base_2, ... when another file
    with different contents already took it."""
    filename = os.path.basename(source)
    other = filename_map.get(filename)
    if other is None or other == source or _same_contents(source, other):
        return filename
    suffix = 1
    while f"{filename}_{suffix}" in filename_map:
        suffix += 1
    return f"{filename}_{suffix}"


def _same_contents(first, second):
    try:
        with open(first, "rb") as a, open(second, "rb") as b:
            return a.read() == b.read()
    except OSError:
        return False
