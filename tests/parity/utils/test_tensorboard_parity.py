"""ember's SummaryWriter against PyTorch's: the same calls write the same events (every
field but wall time: tags, steps, values, histogram buckets, PNG/WAV bytes, plugin
data) into the same sub-directories, the same projector files, and the same errors.

Under EMBER_PARITY_DEVICE ember's tensors are made on that device."""
import os
import pathlib

import numpy as np
import pytest
import torch

import ember

pytest.importorskip("tensorboard")
pytest.importorskip("PIL")

import torch.utils.tensorboard  # noqa: E402
from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader  # noqa: E402
from tensorboard.compat.proto.event_pb2 import Event  # noqa: E402

import ember.utils.tensorboard  # noqa: E402
from tests.parity.compare import _on_device, error_of  # noqa: E402

WRITERS = {torch: torch.utils.tensorboard.SummaryWriter,
           ember: ember.utils.tensorboard.SummaryWriter}


def _written(root):
    """{sub-directory: [events of each event file, wall time zeroed]} and {other file: bytes}."""
    events, files = {}, {}
    for path in sorted(pathlib.Path(root).rglob("*")):
        if not path.is_file():
            continue
        rel = str(path.relative_to(root))
        if "tfevents" not in path.name:
            files[rel] = path.read_bytes()
            continue
        file_events = []
        for record in RawEventFileLoader(str(path)).Load():
            event = Event.FromString(record)
            event.wall_time = 0
            file_events.append(event)
        events.setdefault(str(path.parent.relative_to(root)), []).append(file_events)
    return events, files


def _check_same(tmp_path, scenario, **writer_kwargs):
    """Runs ``scenario(writer, lib, rng)`` with each library into its own directory and
    compares what was written."""
    written = {}
    for lib in (torch, ember):
        root = tmp_path / lib.__name__
        rng = np.random.default_rng(0)
        with WRITERS[lib](root, **writer_kwargs) as w:
            if lib is ember:
                _on_device(scenario, w, lib, rng)
            else:
                scenario(w, lib, rng)
        written[lib] = _written(root)
    (t_events, t_files), (e_events, e_files) = written[torch], written[ember]
    assert sorted(e_events) == sorted(t_events)
    for folder, t_folder in t_events.items():
        e_folder = e_events[folder]
        assert [len(f) for f in e_folder] == [len(f) for f in t_folder], folder
        for t_file, e_file in zip(t_folder, e_folder):
            for t_event, e_event in zip(t_file, e_file):
                assert e_event == t_event, f"{folder}:\n{e_event}\n!= torch's\n{t_event}"
    assert sorted(e_files) == sorted(t_files)
    for name, content in t_files.items():
        assert e_files[name] == content, name
    return t_events


def _floats(rng, *shape):
    return rng.random(shape).astype(np.float32)


def test_scalars(tmp_path):
    def scenario(w, lib, rng):
        w.add_scalar("a/loss", lib.tensor(0.5, requires_grad=True), 1)
        w.add_scalar("f64", lib.tensor([0.1], dtype=lib.float64), 1)
        w.add_scalar("int", 3, 2, new_style=True)
        w.add_scalar("np", np.float64(0.1), np.int64(2), new_style=True, double_precision=True)
        w.add_scalar("walltime", 1.0, lib.tensor(5), walltime=12.5)
        w.add_scalars("run/x", {"train": 1.0, "val": lib.tensor(2.0)}, 3)
        w.add_scalars("run/x", {"train": 0.5}, 4, walltime=3.0)

    events = _check_same(tmp_path, scenario)
    assert sorted(events) == [".", "run_x_train", "run_x_val"]


def test_histograms(tmp_path):
    def scenario(w, lib, rng):
        x = rng.standard_normal((6, 5)).astype(np.float32)
        w.add_histogram("tf32", lib.tensor(x), 0)
        w.add_histogram("tf64_noncontiguous", lib.tensor(x.astype(np.float64)).t(), 1)
        w.add_histogram("ints", lib.tensor([1, 2, 2, 7]), 2, bins=4)
        w.add_histogram("auto", x, 3, bins="auto")
        w.add_histogram("merged", lib.tensor(x), 4, bins=11, max_bins=4)
        w.add_histogram("tf_merged", lib.tensor(x), 5, max_bins=30)
        w.add_histogram("edges", lib.tensor([0.0, 0.5, 3.0]), 6, bins=[0.0, 1.0, 2.0, 3.0])
        w.add_histogram_raw("raw", 0, 2, 3, 3.0, 5.0, [1.0, 2.0], [1, 2], 7)

    _check_same(tmp_path, scenario)


def test_images(tmp_path):
    def scenario(w, lib, rng):
        chw = _floats(rng, 3, 8, 6)
        w.add_image("chw", lib.tensor(chw, requires_grad=True), 0)
        w.add_image("hwc_uint8", lib.tensor((chw.transpose(1, 2, 0) * 255).astype(np.uint8)),
                    0, dataformats="HWC")
        w.add_image("hw_out_of_range", lib.tensor(chw[0] * 3 - 1), 0, dataformats="HW")
        w.add_image("one_channel", lib.tensor(chw[:1]), 0)
        w.add_image("numpy_f64", chw.astype(np.float64), 0)
        w.add_images("grid", lib.tensor(_floats(rng, 10, 1, 4, 4)), 1)
        w.add_images("nhwc", lib.tensor(_floats(rng, 3, 4, 5, 3)), 1, dataformats="NHWC")
        w.add_image_with_boxes("boxes", lib.tensor(chw), lib.tensor([[1.0, 1, 4, 5],
                                                                     [0, 0, 2, 2]]),
                               2, labels=["cat", "dog"])
        w.add_image_with_boxes("boxes_nolabel", lib.tensor(chw), lib.tensor([[1.0, 1, 4, 5]]),
                               2, labels="wrong count", rescale=2)

    _check_same(tmp_path, scenario)


def test_text_audio_pr_layouts(tmp_path):
    def scenario(w, lib, rng):
        w.add_text("note", "hello **world** é", 1)
        wave = np.sin(np.arange(200) / 7.0).astype(np.float32)
        w.add_audio("wave", lib.tensor(wave).unsqueeze(0), 2, sample_rate=8000)
        w.add_audio("clipped", lib.tensor(wave * 2, dtype=lib.float64), 2)
        labels = rng.random(20) > 0.5
        predictions = _floats(rng, 20)
        w.add_pr_curve("pr", lib.tensor(labels), lib.tensor(predictions), 3)
        w.add_pr_curve("pr_weighted", lib.tensor(labels.astype(np.int64)), predictions, 3,
                       num_thresholds=10, weights=np.linspace(0.5, 1, 20))
        w.add_pr_curve("pr_capped", labels, predictions, 3, num_thresholds=300)
        counts = [np.array([3.0, 2, 1]), np.array([2.0, 1, 0]), np.array([0.0, 1, 2]),
                  np.array([0.0, 1, 2]), np.array([0.6, 0.66, 1.0]), np.array([1, 0.66, 0.33])]
        w.add_pr_curve_raw("pr_raw", *counts, 4, num_thresholds=3)
        w.add_custom_scalars({"cat": {"lines": ["Multiline", ["a", "b"]],
                                      "band": ["Margin", ["v", "lo", "hi"]]}})
        w.add_custom_scalars_multilinechart(["a", "b"], category="c2", title="t2")
        w.add_custom_scalars_marginchart(["a", "b", "c"])

    _check_same(tmp_path, scenario)


def test_tensors_and_meshes(tmp_path):
    def scenario(w, lib, rng):
        for dtype in ("float32", "float64", "float16", "bfloat16", "int8", "uint8", "int16",
                      "int32", "int64", "bool", "complex64", "complex128"):
            values = rng.standard_normal((2, 3)) * 10
            if dtype.startswith("complex"):
                values = values + 1j
            t = lib.tensor(values).to(getattr(lib, dtype))
            w.add_tensor(f"t/{dtype}", t, 1)
        w.add_tensor("t/noncontiguous", lib.arange(6.0).reshape(2, 3).t(), 1)
        vertices = _floats(rng, 1, 4, 3)
        w.add_mesh("mesh", lib.tensor(vertices),
                   colors=lib.tensor(np.full((1, 4, 3), 200, np.uint8)),
                   faces=lib.tensor([[[0, 1, 2], [1, 2, 3]]]),
                   config_dict={"camera": {"fov": 75}, "a": 1}, global_step=2)
        w.add_mesh("points", vertices, global_step=3)

    _check_same(tmp_path, scenario)


def test_hparams(tmp_path):
    def scenario(w, lib, rng):
        w.add_hparams({"lr": 0.1, "bs": 32, "opt": "sgd", "flag": True, "none": None,
                       "t": lib.tensor([0.5])}, {"hp/acc": 0.9, "hp/loss": lib.tensor(0.25)},
                      hparam_domain_discrete={"opt": ["sgd", "adam"], "bs": [16, 32],
                                              "flag": [True, False]},
                      run_name="run1", global_step=3)
        w.add_hparams({"lr": 0.01}, {"hp/acc": 0.5}, run_name="run2")

    events = _check_same(tmp_path, scenario)
    assert sorted(events) == [".", "run1", "run2"]


def test_embeddings(tmp_path):
    def scenario(w, lib, rng):
        mat = rng.standard_normal((5, 3)).astype(np.float32)
        w.add_embedding(lib.tensor(mat, requires_grad=True), metadata=list("abcde"),
                        label_img=lib.tensor(_floats(rng, 5, 3, 6, 6)), global_step=2,
                        tag="emb/one")
        w.add_embedding(mat.astype(np.float64), metadata=[[c, i] for i, c in enumerate("vwxyz")],
                        metadata_header=["letter", "index"])
        w.add_embedding(lib.tensor(mat[:2]), label_img=lib.tensor(_floats(rng, 2, 1, 3, 3)),
                        global_step=7, tag="100%\\")

    _check_same(tmp_path, scenario)


def test_purge_step_suffix_and_reopen(tmp_path):
    def scenario(w, lib, rng):
        w.add_scalar("a", 1.0, 6)
        w.close()
        w.add_scalar("a", 2.0, 7)  # after close: a new event file
        w.flush()

    events = _check_same(tmp_path, scenario, purge_step=5, filename_suffix=".x")
    assert [len(f) for f in events["."]] == [4, 2]


def test_onnx_graph(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("LeakyRelu", ["X"], ["H"], alpha=0.1),
         helper.make_node("Gemm", ["H", "W"], ["Y"], transB=1)], "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 3]),
         helper.make_tensor_value_info("W", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 2])])
    path = str(tmp_path / "model.onnx")
    onnx.save(helper.make_model(graph), path)
    _check_same(tmp_path, lambda w, lib, rng: w.add_onnx_graph(path))


def test_default_logdir(tmp_path, monkeypatch):
    import re
    import socket

    monkeypatch.chdir(tmp_path)
    form = re.compile(re.escape("runs" + os.sep) + r"[A-Z][a-z]{2}\d{2}_\d{2}-\d{2}-\d{2}_"
                      + re.escape(socket.gethostname() + "_c") + "$")
    for lib in (torch, ember):
        w = WRITERS[lib](comment="_c")
        w.close()
        assert form.match(w.get_logdir()), w.get_logdir()
        assert os.listdir(w.get_logdir())
    log_dir = pathlib.Path("x")
    assert WRITERS[ember](log_dir).get_logdir() is log_dir
    assert WRITERS[ember]("").get_logdir().startswith("runs")  # empty: the default too


ERROR_CASES = {
    "scalar_many": lambda w, lib: w.add_scalar("a", lib.tensor([1.0, 2.0, 3.0])),
    "scalar_list": lambda w, lib: w.add_scalar("a", [1.0]),
    "scalar_none": lambda w, lib: w.add_scalar("a", None),
    "scalar_str": lambda w, lib: w.add_scalar("a", "x"),
    "hparams_not_dict": lambda w, lib: w.add_hparams([("a", 1)], {}),
    "hparams_list_value": lambda w, lib: w.add_hparams({"a": [1]}, {}),
    "hparams_numpy_int": lambda w, lib: w.add_hparams({"a": np.int64(1)}, {}),
    "hparams_0d_tensor": lambda w, lib: w.add_hparams({"a": lib.tensor(1.0)}, {}),
    "hparams_domain_type": lambda w, lib: w.add_hparams({"a": 1}, {},
                                                       hparam_domain_discrete={"a": [1.0]}),
    "hparams_domain_key": lambda w, lib: w.add_hparams({"a": 1}, {},
                                                      hparam_domain_discrete={"b": [1]}),
    "hparams_domain_not_dict": lambda w, lib: w.add_hparams({"a": 1}, {},
                                                           hparam_domain_discrete=[1]),
    "histogram_empty": lambda w, lib: w.add_histogram("h", lib.tensor([])),
    "histogram_nan": lambda w, lib: w.add_histogram("h", lib.tensor([float("nan")])),
    "histogram_nan_int_bins": lambda w, lib: w.add_histogram("h", lib.tensor([float("nan")]),
                                                             bins=3),
    "histogram_raw_lengths": lambda w, lib: w.add_histogram_raw("h", 0, 1, 1, 1, 1, [1, 2], [1]),
    "image_format_length": lambda w, lib: w.add_image("i", lib.zeros(4, 4)),
    "image_format_repeat": lambda w, lib: w.add_image("i", lib.zeros(3, 4, 4),
                                                      dataformats="CCW"),
    "images_two_channels": lambda w, lib: w.add_images("i", lib.zeros(2, 2, 4, 4)),
    "embedding_labels": lambda w, lib: w.add_embedding(lib.zeros(3, 2), metadata=["a"]),
    "embedding_3d": lambda w, lib: w.add_embedding(lib.zeros(3, 2, 1), global_step=5),
    "embedding_images": lambda w, lib: w.add_embedding(lib.zeros(3, 2),
                                                       label_img=lib.zeros(2, 3, 4, 4),
                                                       global_step=6),
    "embedding_header": lambda w, lib: w.add_embedding(
        lib.zeros(2, 2), metadata=[["a", 1], ["b", 2]], metadata_header=["x"], global_step=7),
    "marginchart_tags": lambda w, lib: w.add_custom_scalars_marginchart(["a", "b"]),
    "custom_margin_tags": lambda w, lib: w.add_custom_scalars({"c": {"t": ["Margin", ["a"]]}}),
    "tensor_numpy": lambda w, lib: w.add_tensor("t", np.zeros(2)),
    "audio_2d": lambda w, lib: w.add_audio("a", lib.zeros(2, 3)),
    "pr_lengths": lambda w, lib: w.add_pr_curve("p", lib.tensor([1, 0]), lib.tensor([0.5])),
    "text_not_str": lambda w, lib: w.add_text("t", 3),
    "video_4d": lambda w, lib: w.add_video("v", lib.zeros(2, 3, 4, 4)),
}


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_errors(tmp_path, case):
    errors = []
    for lib in (torch, ember):
        with WRITERS[lib](tmp_path / lib.__name__) as w:
            errors.append(error_of(lambda: ERROR_CASES[case](w, lib)) if lib is torch else
                          _on_device(error_of, lambda: ERROR_CASES[case](w, lib)))
    assert errors[0] is not None
    assert errors[1] == errors[0]


def test_unsupported_dtype_error(tmp_path):
    with ember.utils.tensorboard.SummaryWriter(tmp_path) as w:
        t_error = error_of(lambda: torch.utils.tensorboard.summary.tensor_proto(
            "t", torch.zeros(2, dtype=torch.uint16)))
        e_error = error_of(lambda: w.add_tensor("t", ember.zeros(2, dtype=ember.uint16)))
    assert e_error == (t_error[0], t_error[1].replace("torch.", "ember."))


def test_optional_packages_missing(tmp_path, capsys):
    for name, call in (("matplotlib", lambda w, lib: w.add_figure("f", None)),):
        try:
            __import__(name)
        except ImportError:
            errors = [error_of(lambda: call(WRITERS[lib](tmp_path / lib.__name__), lib))
                      for lib in (torch, ember)]
            assert errors[0] == errors[1]
    try:
        import moviepy  # noqa: F401
    except ImportError:
        def scenario(w, lib, rng):
            w.add_video("v", lib.tensor(_floats(rng, 3, 2, 3, 4, 4)), 1)

        _check_same(tmp_path / "video", scenario)
        printed = capsys.readouterr().out
        assert printed.count("add_video needs package moviepy") == 2


def test_training_loop_as_torch_code(tmp_path):
    """The same program on both libraries logs the same losses."""
    logged = {}
    for lib in (torch, ember):
        lib.manual_seed(0)
        x = lib.tensor(np.random.default_rng(1).standard_normal((16, 3)).astype(np.float32))
        y = x @ lib.tensor([[1.0], [-2.0], [0.5]])
        model = lib.nn.Linear(3, 1)
        with lib.no_grad():
            model.weight.copy_(lib.tensor([[0.1, 0.2, 0.3]]))
            model.bias.zero_()
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        with WRITERS[lib](tmp_path / lib.__name__) as writer:
            for step in range(4):
                opt.zero_grad()
                loss = lib.nn.functional.mse_loss(model(x), y)
                loss.backward()
                opt.step()
                writer.add_scalar("loss", loss, step)
        events = _written(tmp_path / lib.__name__)[0]["."][0]
        logged[lib] = [(e.step, e.summary.value[0].simple_value) for e in events
                       if e.HasField("summary")]
    assert [s for s, _ in logged[ember]] == [s for s, _ in logged[torch]] == [0, 1, 2, 3]
    np.testing.assert_allclose([v for _, v in logged[ember]], [v for _, v in logged[torch]],
                               rtol=1e-5)
    assert os.listdir(tmp_path / "ember")


@pytest.mark.parametrize("batch", [1, 2, 3, 5, 8, 9])
def test_video_and_grid_layouts(batch):
    from torch.utils.tensorboard import _utils as torch_utils

    from ember.utils.tensorboard import _convert

    rng = np.random.default_rng(batch)
    clip = (rng.random((batch, 2, 3, 4, 5)) * 255).astype(np.uint8)
    np.testing.assert_array_equal(_convert.prepare_video(clip), torch_utils._prepare_video(clip))
    images = rng.random((batch, 1, 3, 2))
    for ncols in (1, 3, 8):
        np.testing.assert_array_equal(_convert.make_grid(images, ncols),
                                      torch_utils.make_grid(images, ncols))
