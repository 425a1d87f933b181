"""TF_LoadSessionFromSavedModel: a SavedModel directory built here through the
C API (graph, saver ops, a checkpoint written by its own SaveV2, an asset and
a main op) loads into a new session that serves it; and the errors for a
non-empty graph, unknown tags, missing or damaged files and bad arguments
(never a crash, the graph left as it was)."""

import shutil

import numpy as np
import pytest
from capi_helpers import CODES, TF_FLOAT, TF_INT64, TF_STRING

W = np.array([2.0, 3.0], np.float32)
X = np.array([[1.0, 1.0], [0.5, -2.0]], np.float32)


def string_const(api, graph, name, strings, shape=None):
    tensor = api.string_tensor(strings, shape)
    try:
        return api.op(
            graph, "Const", name, attrs={"value": ("tensor", tensor), "dtype": ("type", TF_STRING)}
        )
    finally:
        api.lib.TF_DeleteTensor(tensor)


def variable(api, graph, name, dtype, shape, initial):
    var = api.op(
        graph, "VariableV2", name, attrs={"dtype": ("type", dtype), "shape": ("shape", shape)}
    )
    assign = api.op(graph, "Assign", f"{name}/Assign", inputs=[(var, 0), (initial, 0)])
    return var, assign


def build_saved_model(api, graph, export_dir):
    """Writes export_dir as a builder would: y = x * w, a counter (41) the
    main op increments after the restore, a string variable the main op
    sets to the asset's path. The filename tensor's default names a path
    that no longer exists once the directory is moved, so only the fed
    prefix can restore."""
    lib, pb = api.lib, api.pb
    variables_prefix = str(export_dir / "variables" / "variables")
    x = api.placeholder(graph, "x", shape=[-1, 2])
    w, w_init = variable(api, graph, "w", TF_FLOAT, [2], api.const(graph, "w/initial", W))
    api.binary(graph, "Mul", "y", x, w)
    counter, counter_init = variable(
        api, graph, "counter", TF_INT64, [], api.const(graph, "counter/initial", np.int64(41))
    )
    vocab, vocab_init = variable(
        api, graph, "vocab", TF_STRING, [], string_const(api, graph, "vocab/initial", [b""], [])
    )
    init = api.op(graph, "NoOp", "init", control=[w_init, counter_init, vocab_init])
    filename = api.op(
        graph,
        "PlaceholderWithDefault",
        "save/Const",
        inputs=[(string_const(api, graph, "save/default", [variables_prefix.encode()], []), 0)],
        attrs={"dtype": ("type", TF_STRING), "shape": ("shape", [])},
    )
    keys = [b"counter", b"vocab", b"w"]
    refs = [counter, vocab, w]
    dtypes = ("list_type", [TF_INT64, TF_STRING, TF_FLOAT])
    names = string_const(api, graph, "save/tensor_names", keys)
    slices = string_const(api, graph, "save/shape_and_slices", [b""] * 3)
    desc = lib.TF_NewOperation(graph, b"SaveV2", b"save/SaveV2")
    for oper in (filename, names, slices):
        lib.TF_AddInput(desc, api.output(oper))
    lib.TF_AddInputList(desc, api.outputs([(r, 0) for r in refs]), 3)
    lib.TF_SetAttrTypeList(desc, b"dtypes", api.ffi.new("TF_DataType[]", dtypes[1]), 3)
    save = api.call(lib.TF_FinishOperation, desc)
    desc = lib.TF_NewOperation(graph, b"RestoreV2", b"save/RestoreV2")
    for oper in (filename, names, slices):
        lib.TF_AddInput(desc, api.output(oper))
    lib.TF_SetAttrTypeList(desc, b"dtypes", api.ffi.new("TF_DataType[]", dtypes[1]), 3)
    restore = api.call(lib.TF_FinishOperation, desc)
    assigns = [
        api.op(graph, "Assign", f"save/Assign_{i}", inputs=[(ref, 0), (restore, i)])
        for i, ref in enumerate(refs)
    ]
    api.op(graph, "NoOp", "save/restore_all", control=assigns)
    asset = string_const(api, graph, "vocab_asset", [b"path/when/saved/vocab.txt"], [])
    bump = api.op(
        graph,
        "AssignAdd",
        "counter/bump",
        inputs=[(counter, 0), (api.const(graph, "one", np.int64(1)), 0)],
    )
    set_vocab = api.op(graph, "Assign", "vocab/set", inputs=[(vocab, 0), (asset, 0)])
    api.op(graph, "NoOp", "main_op", control=[bump, set_vocab])

    (export_dir / "variables").mkdir(parents=True)
    (export_dir / "assets").mkdir()
    (export_dir / "assets" / "vocab.txt").write_text("alpha\nbeta\n")
    session = api.new_session(graph)
    try:
        api.run(session, targets=[init])
        api.run(session, targets=[save])
    finally:
        status = lib.TF_NewStatus()
        lib.TF_DeleteSession(session, status)
        lib.TF_DeleteStatus(status)

    meta = pb.MetaGraphDef()
    meta.meta_info_def.tags.append("serve")
    meta.graph_def.CopyFrom(api.graph_def(graph))
    meta.saver_def.filename_tensor_name = "save/Const:0"
    meta.saver_def.save_tensor_name = "save/SaveV2"
    meta.saver_def.restore_op_name = "save/restore_all"
    meta.collection_def["saved_model_main_op"].node_list.value.append("main_op")
    asset_file_def = pb.AssetFileDef(filename="vocab.txt")
    asset_file_def.tensor_info.name = "vocab_asset:0"
    packed = meta.collection_def["saved_model_assets"].any_list.value.add()
    packed.type_url = "type.googleapis.com/tensorflow.AssetFileDef"
    packed.value = asset_file_def.SerializeToString()
    signature = meta.signature_def["serving_default"]
    signature.method_name = "tensorflow/serving/predict"
    signature.inputs["x"].name = "x:0"
    signature.inputs["x"].dtype = TF_FLOAT
    signature.outputs["y"].name = "y:0"
    signature.outputs["y"].dtype = TF_FLOAT
    saved_model = pb.SavedModel(saved_model_schema_version=1)
    saved_model.meta_graphs.add().CopyFrom(meta)
    (export_dir / "saved_model.pb").write_bytes(saved_model.SerializeToString())
    return saved_model


@pytest.fixture(scope="module")
def saved_model_dir(api, tmp_path_factory):
    """The directory, moved after writing (the saved default prefix is gone)."""
    root = tmp_path_factory.mktemp("saved_model")
    graph = api.lib.TF_NewGraph()
    try:
        saved_model = build_saved_model(api, graph, root / "written")
    finally:
        api.lib.TF_DeleteGraph(graph)
    shutil.move(str(root / "written"), str(root / "model"))
    return root / "model", saved_model


def load(api, graph, export_dir, tags=(b"serve",), meta_graph_def=None, run_options=None):
    """(session or NULL, code, message) of TF_LoadSessionFromSavedModel."""
    ffi, lib = api.ffi, api.lib
    options = lib.TF_NewSessionOptions()
    status = lib.TF_NewStatus()
    # The tag strings must outlive the call: cffi frees them with their owners.
    tag_strings = [ffi.new("char[]", tag) for tag in tags]
    tag_array = ffi.new("char*[]", tag_strings) if tags else ffi.NULL
    options_buffer = ffi.NULL
    if run_options is not None:
        options_buffer = lib.TF_NewBufferFromString(run_options, len(run_options))
    try:
        directory = ffi.NULL if export_dir is None else str(export_dir).encode()
        session = lib.TF_LoadSessionFromSavedModel(
            options,
            options_buffer,
            directory,
            tag_array,
            len(tags),
            graph,
            meta_graph_def if meta_graph_def is not None else ffi.NULL,
            status,
        )
        return session, api.code(status), api.message(status)
    finally:
        lib.TF_DeleteStatus(status)
        lib.TF_DeleteSessionOptions(options)
        lib.TF_DeleteBuffer(options_buffer)


def delete_session(api, session):
    status = api.lib.TF_NewStatus()
    api.lib.TF_DeleteSession(session, status)
    api.check(status)
    api.lib.TF_DeleteStatus(status)


def test_TF_LoadSessionFromSavedModel_serves_the_restored_model(api, lib, graph, saved_model_dir):
    export_dir, saved_model = saved_model_dir
    meta_graph_def = lib.TF_NewBuffer()
    session, code, message = load(api, graph, export_dir, meta_graph_def=meta_graph_def)
    assert code == 0, message
    try:
        # The caller's graph holds the meta graph's operations, by name.
        x = lib.TF_GraphOperationByName(graph, b"x")
        y = lib.TF_GraphOperationByName(graph, b"y")
        assert x != api.ffi.NULL and y != api.ffi.NULL
        assert sorted(api.operation_names(graph)) == sorted(
            node.name for node in saved_model.meta_graphs[0].graph_def.node
        )
        (y_value,) = api.run(session, feeds=[((x, 0), X)], fetches=[(y, 0)])
        np.testing.assert_allclose(y_value, X * W)
        # The main op ran after the restore (41 + 1), fed the asset's path.
        counter = lib.TF_GraphOperationByName(graph, b"counter")
        vocab = lib.TF_GraphOperationByName(graph, b"vocab")
        counter_value, vocab_value = api.run(session, fetches=[(counter, 0), (vocab, 0)])
        assert counter_value == 42
        assert vocab_value == [str(export_dir / "assets" / "vocab.txt").encode()]
        # meta_graph_def is the chosen MetaGraphDef, serialized.
        returned = api.pb.MetaGraphDef.FromString(
            api.ffi.buffer(meta_graph_def.data, meta_graph_def.length)[:]
        )
        assert returned == saved_model.meta_graphs[0]
        # The session extends with operations added to the graph afterwards.
        doubled = api.binary(graph, "AddV2", "doubled", y, y)
        (doubled_value,) = api.run(session, feeds=[((x, 0), X)], fetches=[(doubled, 0)])
        np.testing.assert_allclose(doubled_value, 2 * X * W)
    finally:
        delete_session(api, session)
        lib.TF_DeleteBuffer(meta_graph_def)


def test_TF_LoadSessionFromSavedModel_reads_a_text_saved_model(api, lib, graph, saved_model_dir):
    from google.protobuf import text_format

    export_dir, saved_model = saved_model_dir
    text_dir = export_dir.parent / "text_model"
    if not text_dir.exists():
        shutil.copytree(export_dir, text_dir)
        (text_dir / "saved_model.pb").unlink()
        (text_dir / "saved_model.pbtxt").write_text(text_format.MessageToString(saved_model))
    session, code, message = load(api, graph, text_dir)
    assert code == 0, message
    try:
        counter = lib.TF_GraphOperationByName(graph, b"counter")
        assert api.run(session, fetches=[(counter, 0)]) == [42]
    finally:
        delete_session(api, session)


def test_TF_LoadSessionFromSavedModel_outlives_an_early_graph_delete(api, lib, saved_model_dir):
    graph = lib.TF_NewGraph()
    session, code, message = load(api, graph, saved_model_dir[0])
    assert code == 0, message
    y = lib.TF_GraphOperationByName(graph, b"y")
    x = lib.TF_GraphOperationByName(graph, b"x")
    lib.TF_DeleteGraph(graph)  # freed when the session goes
    (y_value,) = api.run(session, feeds=[((x, 0), X)], fetches=[(y, 0)])
    np.testing.assert_allclose(y_value, X * W)
    delete_session(api, session)


def test_TF_LoadSessionFromSavedModel_needs_an_empty_graph(api, lib, graph, saved_model_dir):
    api.placeholder(graph, "already_here")
    session, code, message = load(api, graph, saved_model_dir[0])
    assert session == api.ffi.NULL
    assert code == CODES["INVALID_ARGUMENT"] and message == "Graph is non-empty."
    assert api.operation_names(graph) == ["already_here"]


def test_TF_LoadSessionFromSavedModel_needs_the_exact_tag_set(api, lib, graph, saved_model_dir):
    for tags in ([b"train"], [b"serve", b"gpu"], []):
        session, code, message = load(api, graph, saved_model_dir[0], tags=tags)
        assert session == api.ffi.NULL
        assert code == CODES["NOT_FOUND"]
        assert message.startswith("Could not find meta graph def matching supplied tags: {")
        assert "saved_model_cli" in message
        assert api.operation_names(graph) == []
    _, _, message = load(api, graph, saved_model_dir[0], tags=[b"train"])
    assert "tags: { train }" in message


def test_TF_LoadSessionFromSavedModel_reports_missing_and_damaged_files(
    api, lib, graph, saved_model_dir, tmp_path
):
    session, code, message = load(api, graph, tmp_path / "nowhere")
    assert session == api.ffi.NULL and code == CODES["NOT_FOUND"]
    assert "Could not find SavedModel .pb or .pbtxt" in message
    damaged = tmp_path / "damaged"
    shutil.copytree(saved_model_dir[0], damaged)
    data = (damaged / "saved_model.pb").read_bytes()
    for length in (1, len(data) // 2, len(data) - 1):
        (damaged / "saved_model.pb").write_bytes(data[:length])
        session, code, message = load(api, graph, damaged)
        assert session == api.ffi.NULL
        assert code == CODES["DATA_LOSS"], (length, message)
        assert "saved_model.pb" in message
    (damaged / "saved_model.pb").write_bytes(data)
    # Without its checkpoint the restore fails, and nothing is kept.
    for name in (damaged / "variables").iterdir():
        name.write_bytes(b"garbage")
    session, code, message = load(api, graph, damaged)
    assert session == api.ffi.NULL
    assert code in (CODES["NOT_FOUND"], CODES["DATA_LOSS"]), message
    assert api.operation_names(graph) == []


def test_TF_LoadSessionFromSavedModel_checks_its_arguments(api, lib, graph, saved_model_dir):
    ffi = api.ffi
    export_dir = saved_model_dir[0]
    session, code, _ = load(api, graph, None)
    assert session == ffi.NULL and code == CODES["INVALID_ARGUMENT"]
    session, code, _ = load(api, ffi.NULL, export_dir)
    assert session == ffi.NULL and code == CODES["INVALID_ARGUMENT"]
    session, code, message = load(api, graph, export_dir, run_options=b"\xff\xff")
    assert session == ffi.NULL and code == CODES["INVALID_ARGUMENT"]
    assert message == "Unparseable RunOptions proto"
    full = lib.TF_NewBufferFromString(b"x", 1)
    session, code, message = load(api, graph, export_dir, meta_graph_def=full)
    lib.TF_DeleteBuffer(full)
    assert session == ffi.NULL and code == CODES["INVALID_ARGUMENT"]
    assert message == "Passing non-empty TF_Buffer is invalid."
    status = lib.TF_NewStatus()
    options = lib.TF_NewSessionOptions()
    session = lib.TF_LoadSessionFromSavedModel(
        options, ffi.NULL, str(export_dir).encode(), ffi.NULL, 1, graph, ffi.NULL, status
    )
    assert session == ffi.NULL and api.code(status) == CODES["INVALID_ARGUMENT"]
    session = lib.TF_LoadSessionFromSavedModel(
        ffi.NULL, ffi.NULL, str(export_dir).encode(), ffi.NULL, 0, graph, ffi.NULL, status
    )
    assert session == ffi.NULL and api.code(status) == CODES["INVALID_ARGUMENT"]
    lib.TF_DeleteSessionOptions(options)
    lib.TF_DeleteStatus(status)
    assert api.operation_names(graph) == []
