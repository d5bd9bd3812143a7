"""ember.utils.tensorboard.SummaryWriter: what it writes, read back with tensorboard's own
event-file loader; expected values come from the inputs and arithmetic."""
import io
import os
import subprocess
import sys
import wave

import numpy as np
import pytest

import ember

pytest.importorskip("tensorboard")
PIL_Image = pytest.importorskip("PIL.Image")

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402
from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader  # noqa: E402
from tensorboard.compat.proto.event_pb2 import Event  # noqa: E402
from tensorboard.plugins.custom_scalar import layout_pb2  # noqa: E402
from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData  # noqa: E402
from tensorboard.plugins.pr_curve.plugin_data_pb2 import PrCurvePluginData  # noqa: E402

from ember.utils.tensorboard import SummaryWriter  # noqa: E402


def _events(logdir):
    """Every event of the event files directly in ``logdir``, in file then write order (as
    written: not migrated to tensors as tensorboard's EventFileLoader would)."""
    files = sorted(f for f in os.listdir(logdir) if "tfevents" in f)
    return [e for f in files for e in _file_events(os.path.join(logdir, f))]


def _file_events(path):
    return [Event.FromString(r) for r in RawEventFileLoader(str(path)).Load()]


def _values(logdir):
    """(step, Summary.Value) of every summary value written to ``logdir``."""
    return [(e.step, v) for e in _events(logdir) if e.HasField("summary")
            for v in e.summary.value]


def _only(logdir, tag):
    found = [(s, v) for s, v in _values(logdir) if v.tag == tag]
    assert len(found) == 1, found
    return found[0]


def test_import_is_lazy_and_needs_tensorboard():
    code = ("import sys, ember, ember.utils; assert 'ember.utils.tensorboard' not in sys.modules\n"
            "sys.modules['tensorboard'] = None\n"
            "try:\n    import ember.utils.tensorboard\n"
            "except ImportError as e:\n    print(type(e).__name__, e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.startswith("ModuleNotFoundError") and "tensorboard" in out


def test_torch_import_resolves_under_as_torch(tmp_path):
    code = ("import ember.as_torch\nember.as_torch.install()\nimport torch\n"
            "from torch.utils.tensorboard import SummaryWriter\n"
            f"with SummaryWriter({str(tmp_path)!r}) as w:\n"
            "    w.add_scalar('x', torch.tensor(2.0), 1)\n"
            "print(SummaryWriter.__module__)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "ember.utils.tensorboard.writer"
    assert [(s, v.simple_value) for s, v in _values(tmp_path)] == [(1, 2.0)]


def test_scalars_read_back_with_event_accumulator(tmp_path):
    with SummaryWriter(tmp_path) as w:
        for step in range(3):
            w.add_scalar("loss", ember.tensor(1.0 / (step + 1), requires_grad=True), step)
        w.add_scalar("np", np.float32(0.25), 7, walltime=123.5)
        w.add_scalar("one", ember.ones(1, 1), np.int64(2))
    acc = EventAccumulator(str(tmp_path))
    acc.Reload()
    assert set(acc.Tags()["scalars"]) == {"loss", "np", "one"}
    loss = acc.Scalars("loss")
    assert [e.step for e in loss] == [0, 1, 2]
    np.testing.assert_allclose([e.value for e in loss], [1.0, 0.5, 1 / 3], rtol=1e-6)
    (np_event,) = acc.Scalars("np")
    assert (np_event.step, np_event.value, np_event.wall_time) == (7, 0.25, 123.5)
    assert acc.Scalars("one")[0].step == 2


def test_new_style_scalar_is_a_tensor(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_scalar("f", 0.1, 1, new_style=True)
        w.add_scalar("d", 0.1, 1, new_style=True, double_precision=True)
    _, f = _only(tmp_path, "f")
    _, d = _only(tmp_path, "d")
    assert f.metadata.plugin_data.plugin_name == "scalars"
    assert f.tensor.dtype == 1 and f.tensor.float_val[0] == np.float32(0.1)  # DT_FLOAT
    assert d.tensor.dtype == 2 and d.tensor.double_val[0] == 0.1  # DT_DOUBLE


def test_scalar_errors(tmp_path):
    with SummaryWriter(tmp_path) as w:
        with pytest.raises(AssertionError, match="should contain one element"):
            w.add_scalar("x", ember.ones(3))
        with pytest.raises(NotImplementedError, match="numpy array or torch tensor"):
            w.add_scalar("x", [1.0])


def test_add_scalars_writes_one_directory_per_key(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_scalars("a/b", {"train": 1.0, "val": ember.tensor(2.0)}, 4)
        w.add_scalars("a/b", {"train": 3.0}, 5)
    assert sorted(d for d in os.listdir(tmp_path) if os.path.isdir(tmp_path / d)) == [
        "a_b_train", "a_b_val"]
    train = [(s, v.tag, v.simple_value) for s, v in _values(tmp_path / "a_b_train")]
    assert train == [(4, "a/b", 1.0), (5, "a/b", 3.0)]
    assert [(s, v.simple_value) for s, v in _values(tmp_path / "a_b_val")] == [(4, 2.0)]


def test_histogram_explicit_bins(tmp_path):
    values = ember.tensor([[0.5, 1.5], [1.5, 2.5]]).t()  # non-contiguous
    with SummaryWriter(tmp_path) as w:
        w.add_histogram("h", values, 3, bins=[0.0, 1.0, 2.0, 3.0, 4.0])
    step, v = _only(tmp_path, "h")
    h = v.histo
    assert step == 3
    assert (h.min, h.max, h.num, h.sum) == (0.5, 2.5, 4, 6.0)
    assert h.sum_squares == 0.25 + 2.25 + 2.25 + 6.25
    # the empty last bucket is trimmed; an empty one is added left of the first
    assert list(h.bucket_limit) == [0.0, 1.0, 2.0, 3.0]
    assert list(h.bucket) == [0.0, 1.0, 2.0, 1.0]


def test_histogram_default_bins_and_max_bins(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_histogram("tf", np.array([1.0, 1.0, 10.0]), 0)
        w.add_histogram("merged", np.arange(8.0), 0, bins=8, max_bins=3)
    h = _only(tmp_path, "tf")[1].histo
    limits = np.array(h.bucket_limit)
    assert sum(h.bucket) == 3 and np.all(np.diff(limits) > 0)
    # edges grow by 10%: each value lies in a bucket (left, right] ~ 1.1 wide ratio
    for x in (1.0, 10.0):
        i = np.searchsorted(limits, x)
        assert limits[i - 1] <= x < limits[i] and limits[i] / limits[i - 1] == pytest.approx(1.1)
    m = _only(tmp_path, "merged")[1].histo
    # 8 bins of width 7/8 merged in pairs (the last group padded): 4 buckets of 2
    assert list(m.bucket) == [0, 2, 2, 2, 2]
    np.testing.assert_allclose(m.bucket_limit, [0, 1.75, 3.5, 5.25, 7.0])


def test_histogram_raw_and_errors(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_histogram_raw("r", 0, 2, 3, 3.0, 5.0, [1.0, 2.0], [1, 2], 6)
        with pytest.raises(ValueError, match="bucket_limits"):
            w.add_histogram_raw("r", 0, 2, 3, 3.0, 5.0, [1.0], [1, 2])
        with pytest.raises(ValueError, match="no element"):
            w.add_histogram("e", ember.tensor([]))
    h = _only(tmp_path, "r")[1].histo
    assert list(h.bucket_limit) == [1.0, 2.0] and list(h.bucket) == [1.0, 2.0]


def _png(value):
    return np.asarray(PIL_Image.open(io.BytesIO(value.image.encoded_image_string)))


def test_images_formats_and_scaling(tmp_path):
    rng = np.random.default_rng(0)
    chw = rng.random((3, 4, 5)).astype(np.float32)
    expected = (chw.transpose(1, 2, 0) * 255).astype(np.uint8)
    with SummaryWriter(tmp_path) as w:
        w.add_image("chw", ember.tensor(chw, requires_grad=True), 1)
        w.add_image("hwc", expected, 1, dataformats="HWC")  # uint8: not scaled
        w.add_image("hw", ember.tensor(chw[0] * 2), 1, dataformats="HW")  # clipped at 255
        w.add_images("grid", ember.tensor(rng.random((10, 1, 2, 3)).astype(np.float32)), 1)
    for tag in ("chw", "hwc"):
        v = _only(tmp_path, tag)[1]
        assert (v.image.height, v.image.width, v.image.colorspace) == (4, 5, 3)
        np.testing.assert_array_equal(_png(v), expected)
    grey = np.minimum(chw[0] * 2 * 255, 255).astype(np.uint8)
    np.testing.assert_array_equal(_png(_only(tmp_path, "hw")[1]), np.stack([grey] * 3, 2))
    grid = _only(tmp_path, "grid")[1].image
    assert (grid.height, grid.width) == (2 * 2, 8 * 3)  # 8 per row, 2 rows


def test_image_errors(tmp_path):
    with SummaryWriter(tmp_path) as w:
        with pytest.raises(AssertionError, match="size of input tensor and input format"):
            w.add_image("x", ember.zeros(4, 4))
        with pytest.raises(AssertionError, match="same dimension shorthand"):
            w.add_image("x", ember.zeros(3, 4, 4), dataformats="CCW")


def test_image_with_boxes_draws_on_the_image(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_image_with_boxes("b", ember.zeros(3, 10, 10), ember.tensor([[2.0, 2, 7, 7]]), 0)
    pixels = _png(_only(tmp_path, "b")[1])
    assert pixels[2, 4].tolist() == [255, 0, 0] and pixels[5, 5].tolist() == [0, 0, 0]


def test_text_and_audio(tmp_path):
    samples = np.sin(np.arange(50) / 3.0)
    with SummaryWriter(tmp_path) as w:
        w.add_text("note", "**bold** é", 2)
        w.add_audio("snd", ember.tensor(samples).unsqueeze(0), 3, sample_rate=8000)
    step, t = _only(tmp_path, "note/text_summary")
    assert step == 2 and t.metadata.plugin_data.plugin_name == "text"
    assert t.tensor.string_val == ["**bold** é".encode()]
    a = _only(tmp_path, "snd")[1].audio
    assert (a.sample_rate, a.num_channels, a.length_frames, a.content_type) == (
        8000, 1, 50, "audio/wav")
    with wave.open(io.BytesIO(a.encoded_audio_string)) as wav:
        assert (wav.getnchannels(), wav.getsampwidth(), wav.getframerate()) == (1, 2, 8000)
        pcm = np.frombuffer(wav.readframes(50), "<i2")
    np.testing.assert_array_equal(pcm, (samples * 32767).astype(np.int16))


def test_pr_curve(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_pr_curve("pr", ember.tensor([1, 0, 1]), ember.tensor([0.9, 0.4, 0.2]), 1,
                       num_thresholds=3)
    v = _only(tmp_path, "pr")[1]
    assert PrCurvePluginData.FromString(v.metadata.plugin_data.content).num_thresholds == 3
    data = np.array(v.tensor.float_val).reshape(6, 3)
    # thresholds 0, 0.5, 1: predictions fall in buckets floor(p * 2) = 1, 0, 0
    tp, fp = [2, 1, 0], [1, 0, 0]
    np.testing.assert_allclose(data[0], tp)
    np.testing.assert_allclose(data[1], fp)
    np.testing.assert_allclose(data[2], [0, 1, 1])  # tn = fp[0] - fp
    np.testing.assert_allclose(data[3], [0, 1, 2])  # fn = tp[0] - tp
    np.testing.assert_allclose(data[4], [2 / 3, 1, 0], atol=1e-6)
    np.testing.assert_allclose(data[5], [1, 0.5, 0], atol=1e-6)


def test_custom_scalars_layout(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_custom_scalars({"Losses": {"both": ["Multiline", ["train", "val"]],
                                         "band": ["Margin", ["m", "lo", "hi"]]}})
        with pytest.raises(AssertionError, match="Expected 3 tags, got 2"):
            w.add_custom_scalars_marginchart(["a", "b"])
    v = _only(tmp_path, "custom_scalars__config__")[1]
    layout = layout_pb2.Layout.FromString(v.tensor.string_val[0])
    (category,) = layout.category
    assert category.title == "Losses"
    assert list(category.chart[0].multiline.tag) == ["train", "val"]
    series = category.chart[1].margin.series[0]
    assert (series.value, series.lower, series.upper) == ("m", "lo", "hi")


def test_hparams(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_hparams({"lr": 0.1, "opt": "adam", "skip": None, "w": ember.tensor([0.5])},
                      {"hp/acc": 0.75}, hparam_domain_discrete={"opt": ["adam", "sgd"]},
                      run_name="run1", global_step=4)
        with pytest.raises(TypeError, match="should be dictionary"):
            w.add_hparams([("lr", 0.1)], {})
        with pytest.raises(ValueError, match="value should be one of"):
            w.add_hparams({"lr": [0.1]}, {})
    run = tmp_path / "run1"
    by_tag = {v.tag: (s, v) for s, v in _values(run)}
    assert by_tag["hp/acc"] == (4, by_tag["hp/acc"][1]) and by_tag["hp/acc"][1].simple_value == 0.75
    start = HParamsPluginData.FromString(
        by_tag["_hparams_/session_start_info"][1].metadata.plugin_data.content)
    hp = start.session_start_info.hparams
    assert (hp["lr"].number_value, hp["opt"].string_value, hp["w"].number_value) == (
        0.1, "adam", 0.5)
    assert "skip" not in hp
    exp = HParamsPluginData.FromString(
        by_tag["_hparams_/experiment"][1].metadata.plugin_data.content).experiment
    assert [h.name for h in exp.hparam_infos] == ["lr", "opt", "w"]
    assert [d.string_value for d in exp.hparam_infos[1].domain_discrete.values] == ["adam", "sgd"]
    assert [m.name.tag for m in exp.metric_infos] == ["hp/acc"]


def test_embedding_files(tmp_path):
    mat = ember.tensor([[1.0, 2.0], [3.0, 4.5]], requires_grad=True)
    with SummaryWriter(tmp_path) as w:
        w.add_embedding(mat, metadata=["a", "b"], label_img=ember.ones(2, 3, 4, 4), tag="e/1",
                        global_step=3)
        w.add_embedding(mat.detach().numpy(), metadata=[["a", 1], ["b", 2]],
                        metadata_header=["name", "n"])
        with pytest.raises(AssertionError, match="#labels should equal"):
            w.add_embedding(mat, metadata=["a"], global_step=9)
    folder = tmp_path / "00003" / "e%2f1"
    assert (folder / "tensors.tsv").read_text() == "1.0\t2.0\n3.0\t4.5\n"
    assert (folder / "metadata.tsv").read_text() == "a\nb\n"
    assert (tmp_path / "00000" / "default" / "metadata.tsv").read_text() == "name\tn\na\t1\nb\t2\n"
    sprite = np.asarray(PIL_Image.open(folder / "sprite.png"))
    assert sprite.shape == (8, 8, 3)  # 2 images, 2 per row, padded to a square
    assert (sprite[:4] == 255).all() and (sprite[4:] == 0).all()
    config = (tmp_path / "projector_config.pbtxt").read_text()
    assert 'tensor_name: "e/1:00003"' in config and 'tensor_name: "default:00000"' in config
    assert "single_image_dim: 4" in config


def test_mesh_and_tensor(tmp_path):
    vertices = ember.tensor([[[0.0, 0, 0], [1, 0, 0], [0, 1, 0]]])
    with SummaryWriter(tmp_path) as w:
        w.add_mesh("m", vertices, faces=ember.tensor([[[0, 1, 2]]]), config_dict={"a": 1},
                   global_step=1)
        w.add_tensor("t", ember.tensor([[1, 2], [3, 4]], dtype=ember.int32), 2)
    tags = {v.tag: v for _, v in _values(tmp_path)}
    assert list(tags["m_VERTEX"].tensor.float_val) == [0, 0, 0, 1, 0, 0, 0, 1, 0]
    assert list(tags["m_FACE"].tensor.float_val) == [0, 1, 2]
    assert [d.size for d in tags["t"].tensor.tensor_shape.dim] == [2, 2]
    assert list(tags["t"].tensor.int_val) == [1, 2, 3, 4]


def test_dtypes_and_devices(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_scalar("bf16", ember.tensor(0.5, dtype=ember.bfloat16), 0)
        w.add_histogram("meta", ember.empty(3, device="meta"), 0)  # logged as a stand-in
    assert _only(tmp_path, "bf16")[1].simple_value == 0.5
    assert _only(tmp_path, "meta")[1].histo.num == 1


def test_purge_step_close_and_reopen(tmp_path):
    w = SummaryWriter(tmp_path, purge_step=5, filename_suffix=".run")
    w.add_scalar("a", 1.0, 6)
    w.close()
    w.close()  # a second close is a no-op
    w.add_scalar("a", 2.0, 7)  # a new event file
    w.flush()
    w.close()
    files = sorted(os.listdir(tmp_path))
    assert len(files) == 2 and all(f.endswith(".run") for f in files)
    first = _file_events(tmp_path / files[0])
    assert [e.step for e in first[1:3]] == [5, 5]
    assert first[2].session_log.status == first[2].session_log.START


def test_default_logdir(tmp_path, monkeypatch):
    import socket

    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_lr0.1")
    w.close()
    logdir = w.get_logdir()
    assert logdir.startswith("runs" + os.sep) and logdir.endswith("_" + socket.gethostname()
                                                                  + "_lr0.1")
    assert os.listdir(tmp_path / logdir)


def test_unsupported_parts(tmp_path, capsys):
    with SummaryWriter(tmp_path) as w:
        with pytest.raises(NotImplementedError, match="TorchScript"):
            w.add_graph(ember.nn.Linear(2, 2), ember.ones(1, 2))
        try:
            import moviepy  # noqa: F401
        except ImportError:
            w.add_video("v", ember.zeros(1, 2, 3, 4, 4), 0)
            assert "add_video needs package moviepy" in capsys.readouterr().out
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            with pytest.raises(ImportError):
                w.add_figure("f", None)


def test_training_loop_logs_loss(tmp_path):
    import ember as torch  # PyTorch code, unchanged
    from ember.utils.tensorboard import SummaryWriter as Writer

    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(16, 3)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5]])
    losses = []
    with Writer(log_dir=str(tmp_path)) as writer:
        for step in range(5):
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            writer.add_scalar("train/loss", loss, step)
            writer.add_histogram("weight", model.weight, step)
            losses.append(loss.item())
        writer.add_hparams({"lr": 0.1}, {"final_loss": losses[-1]}, run_name="hp")
    acc = EventAccumulator(str(tmp_path), size_guidance={"histograms": 0})  # 0: keep all
    acc.Reload()
    logged = acc.Scalars("train/loss")
    assert [e.step for e in logged] == list(range(5))
    np.testing.assert_allclose([e.value for e in logged], losses, rtol=1e-6)
    assert losses[-1] < losses[0]
    assert [e.step for e in acc.Histograms("weight")] == list(range(5))
    assert (tmp_path / "hp").is_dir()
