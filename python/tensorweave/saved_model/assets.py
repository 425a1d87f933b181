"""Asset files of a SavedModel: AssetFileDefs bind a file shipped in the
assets/ directory to the string tensor that receives its path at load time.

TensorFlow 1.x builders keep them in the graph collection
"saved_model_assets" as Any protos. An Any names its message type in its
type URL; ours must say tensorflow.AssetFileDef (TensorFlow checks the name
when it unpacks), and we read both that and our own package's name.
"""

from google.protobuf import any_pb2

from tensorweave.proto import meta_graph_pb2

_TYPE_URL_PREFIX = "type.googleapis.com/"
ASSET_FILE_DEF_TYPE_URL = _TYPE_URL_PREFIX + "tensorflow.AssetFileDef"
_ACCEPTED_TYPE_URLS = (
    ASSET_FILE_DEF_TYPE_URL,
    _TYPE_URL_PREFIX + meta_graph_pb2.AssetFileDef.DESCRIPTOR.full_name,
)


def pack_asset_file_def(asset_file_def):
    """An Any holding `asset_file_def` under TensorFlow's type URL."""
    return any_pb2.Any(type_url=ASSET_FILE_DEF_TYPE_URL, value=asset_file_def.SerializeToString())


def unpack_asset_file_def(any_proto):
    """The AssetFileDef in `any_proto`; ValueError if it holds another type."""
    if any_proto.type_url not in _ACCEPTED_TYPE_URLS:
        raise ValueError(
            f"Expected an AssetFileDef in the assets collection, got {any_proto.type_url}"
        )
    return meta_graph_pb2.AssetFileDef.FromString(any_proto.value)


def asset_file_defs(meta_graph_def):
    """The meta graph's AssetFileDefs: its asset_file_def field (TensorFlow 2
    builders) or else its assets collection (TensorFlow 1.x builders)."""
    from tensorweave.saved_model import constants

    if meta_graph_def.asset_file_def:
        return list(meta_graph_def.asset_file_def)
    collection = meta_graph_def.collection_def.get(constants.ASSETS_KEY)
    if collection is None:
        return []
    return [unpack_asset_file_def(value) for value in collection.any_list.value]
