"""TensorBoard ``Summary`` protos built from tensors, arrays and numbers, as
``torch.utils.tensorboard.summary`` builds them (``SummaryWriter`` logs these).

>>> from ember.utils.tensorboard.summary import scalar
>>> scalar("loss", 0.5).value[0].simple_value
0.5
"""
from __future__ import annotations

import io
import json
import struct

import numpy as np
from google.protobuf import struct_pb2
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.custom_scalar import layout_pb2
from tensorboard.plugins.pr_curve.plugin_data_pb2 import PrCurvePluginData
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

from ..._creation import as_tensor
from ..._tensor import Tensor
from ._convert import convert_to_HWC, make_np, prepare_video

__all__ = ["half_to_int", "int_to_half", "hparams", "scalar", "histogram_raw", "histogram",
           "make_histogram", "image", "image_boxes", "draw_boxes", "make_image", "video",
           "make_video", "audio", "custom_scalars", "text", "tensor_proto", "pr_curve_raw",
           "pr_curve", "compute_curve", "mesh"]


def half_to_int(f):
    """The bits of ``f`` as a float32, read as a signed int32.

    >>> half_to_int(1.0)
    1065353216
    """
    return struct.unpack("i", struct.pack("f", f))[0]


def int_to_half(i):
    """Inverse of :func:`half_to_int`.

    >>> int_to_half(1065353216)
    1.0
    """
    return struct.unpack("f", struct.pack("i", i))[0]


def _plugin_metadata(name, content=b""):
    return SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name=name,
                                                                  content=content))


def _shape(sizes):
    return TensorShapeProto(dim=[TensorShapeProto.Dim(size=s) for s in sizes])


# --- scalars, tensors, histograms -----------------------------------------------------

def scalar(name, tensor, collections=None, new_style=False, double_precision=False):
    """A scalar summary: ``simple_value``, or with ``new_style`` a one-element float
    (``double_precision``: double) tensor for the scalars plugin.

    >>> scalar("x", 2, new_style=True).value[0].tensor.float_val
    [2.0]
    """
    array = make_np(tensor).squeeze()
    if array.ndim != 0:
        raise AssertionError(
            "Tensor should contain one element (0 dimensions).             Was given size: "
            f"{array.size} and {array.ndim} dimensions.")
    value = float(array)
    if not new_style:
        return Summary(value=[Summary.Value(tag=name, simple_value=value)])
    proto = (TensorProto(double_val=[value], dtype="DT_DOUBLE") if double_precision
             else TensorProto(float_val=[value], dtype="DT_FLOAT"))
    return Summary(value=[Summary.Value(tag=name, tensor=proto,
                                        metadata=_plugin_metadata("scalars"))])


def _bits_of_float32(t):
    return [half_to_int(v) for v in t.flatten().tolist()]


def _complex_parts(t):
    flat = t.numpy().reshape(-1)
    return np.stack([flat.real, flat.imag], -1).reshape(-1).tolist()


def _flat_list(t):
    return t.flatten().tolist()


# dtype name -> (proto dtype, TensorProto field, values); 16-bit floats go in as the bits
# of their float32 value, as PyTorch writes them
_TENSOR_FIELDS = {
    "float16": ("DT_HALF", "half_val", _bits_of_float32),
    "bfloat16": ("DT_BFLOAT16", "half_val", _bits_of_float32),
    "float32": ("DT_FLOAT", "float_val", _flat_list),
    "float64": ("DT_DOUBLE", "double_val", _flat_list),
    "int8": ("DT_INT8", "int_val", _flat_list),
    "uint8": ("DT_UINT8", "uint32_val", _flat_list),
    "int16": ("DT_INT16", "int_val", _flat_list),
    "int32": ("DT_INT32", "int_val", _flat_list),
    "int64": ("DT_INT64", "int64_val", _flat_list),
    "complex64": ("DT_COMPLEX64", "scomplex_val", _complex_parts),
    "complex128": ("DT_COMPLEX128", "dcomplex_val", _complex_parts),
    "bool": ("DT_BOOL", "bool_val", _flat_list),
}


def tensor_proto(tag, tensor):
    """A summary holding ``tensor`` itself (the "tensor" plugin).

    >>> import ember
    >>> tensor_proto("t", ember.tensor([[1, 2]])).value[0].tensor.int64_val
    [1, 2]
    """
    if tensor.numel() * tensor.itemsize >= (1 << 31):
        raise ValueError("tensor is bigger than protocol buffer's hard limit of 2GB in size")
    entry = _TENSOR_FIELDS.get(str(tensor.dtype).rsplit(".", 1)[-1])
    if entry is None:
        raise ValueError(f"{tag} has unsupported tensor dtype {tensor.dtype}")
    dtype, field, values = entry
    host = tensor.detach().cpu()
    proto = TensorProto(dtype=dtype, tensor_shape=_shape(tensor.shape),
                        **{field: values(host)})
    return Summary(value=[Summary.Value(tag=tag, metadata=_plugin_metadata("tensor"),
                                        tensor=proto)])


def histogram_raw(name, min, max, num, sum, sum_squares, bucket_limits, bucket_counts):  # noqa: A002
    """A histogram summary from its statistics and buckets (right edges and counts).

    >>> histogram_raw("h", 0, 1, 2, 1, 1, [0.5, 1], [1, 1]).value[0].histo.bucket
    [1.0, 1.0]
    """
    histo = HistogramProto(min=min, max=max, num=num, sum=sum, sum_squares=sum_squares,
                           bucket_limit=bucket_limits, bucket=bucket_counts)
    return Summary(value=[Summary.Value(tag=name, histo=histo)])


def histogram(name, values, bins, max_bins=None):
    """A histogram summary of ``values`` in ``bins`` (anything ``numpy.histogram`` takes).

    >>> histogram("h", np.array([0.0, 1.0]), bins=2).value[0].histo.bucket
    [0.0, 1.0, 1.0]
    """
    array = make_np(values)
    return Summary(value=[Summary.Value(
        tag=name, histo=make_histogram(array.astype(float), bins, max_bins))])


def make_histogram(values, bins, max_bins=None):
    """A ``HistogramProto`` of ``values``: empty outer buckets trimmed, and one bucket
    kept (or an empty one added) left of the first non-empty bucket, because TensorBoard
    stores only right edges.

    >>> make_histogram(np.array([1.0, 1.0, 3.0]), bins=[0, 1, 2, 3, 4]).bucket_limit
    [1.0, 2.0, 3.0, 4.0]
    """
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        counts, limits = _merge_bins(counts, limits, len(counts) // max_bins)
    occupied = np.flatnonzero(counts)
    # with no occupied bucket these indices make the slices below empty (or, with a single
    # bucket, keep it), exactly as PyTorch's trimming does
    start = int(occupied[0]) if occupied.size else len(counts)
    end = (int(occupied[-1]) if occupied.size else 0) + 1
    if start > 0:
        counts = counts[start - 1:end]
    else:
        counts = np.concatenate([[0], counts[:end]])
    limits = limits[start:end + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    return HistogramProto(min=values.min(), max=values.max(), num=len(values),
                          sum=values.sum(), sum_squares=values.dot(values),
                          bucket_limit=limits.tolist(), bucket=counts.tolist())


def _merge_bins(counts, limits, group):
    """Sums of ``group`` adjacent buckets (the last group zero-padded) and their edges."""
    short = len(counts) % group
    if short:
        counts = np.concatenate([counts, np.zeros(group - short, counts.dtype)])
    counts = counts.reshape(-1, group).sum(axis=-1)
    merged = np.empty(counts.size + 1, limits.dtype)
    merged[:-1] = limits[:-1:group]
    merged[-1] = limits[-1]
    return counts, merged


# --- images, video, audio -------------------------------------------------------------

def _to_uint8(array):
    """Floats are taken as [0, 1] and scaled by 255; uint8 is already [0, 255]."""
    scale = 1 if array.dtype == np.uint8 else 255
    return (array.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)


def image(tag, tensor, rescale=1, dataformats="NCHW"):
    """An image summary (PNG) of ``tensor`` laid out as ``dataformats``; several images
    (an N dimension) are tiled into one grid.

    >>> image("img", np.zeros((3, 4, 5)), dataformats="CHW").value[0].image.width
    5
    """
    hwc = convert_to_HWC(make_np(tensor), dataformats)
    return Summary(value=[Summary.Value(tag=tag, image=make_image(_to_uint8(hwc),
                                                                  rescale=rescale))])


def image_boxes(tag, tensor_image, tensor_boxes, rescale=1, dataformats="CHW", labels=None):
    """An image summary with boxes (rows of x_min, y_min, x_max, y_max) drawn in red.

    >>> s = image_boxes("b", np.zeros((3, 8, 8)), np.array([[1.0, 1, 6, 6]]))
    >>> s.value[0].image.height
    8
    """
    hwc = convert_to_HWC(make_np(tensor_image), dataformats)
    return Summary(value=[Summary.Value(tag=tag, image=make_image(
        _to_uint8(hwc), rescale=rescale, rois=make_np(tensor_boxes), labels=labels))])


def _draw_box(picture, box, label):
    from PIL import ImageDraw, ImageFont

    left, top, right, bottom = box
    draw = ImageDraw.Draw(picture)
    draw.line([(left, top), (left, bottom), (right, bottom), (right, top), (left, top)],
              width=2, fill="Red")
    if label:
        font = ImageFont.load_default()
        x0, y0, x1, y1 = font.getbbox(label)
        text_width, text_height = x1 - x0, y1 - y0
        margin = np.ceil(0.05 * text_height)
        draw.rectangle([(left, bottom - text_height - 2 * margin), (left + text_width, bottom)],
                       fill="Red")
        draw.text((left + margin, bottom - text_height - margin), label, fill="black",
                  font=font)
    return picture


def draw_boxes(disp_image, boxes, labels=None):
    """``disp_image`` (a PIL image) with each box of ``boxes`` (xyxy rows) drawn on it.

    >>> from PIL import Image
    >>> picture = draw_boxes(Image.new("RGB", (8, 8)), np.array([[1, 1, 6, 6]]))
    >>> picture.getpixel((1, 3))
    (255, 0, 0)
    """
    for i in range(boxes.shape[0]):
        disp_image = _draw_box(disp_image, boxes[i, :4], None if labels is None else labels[i])
    return disp_image


def make_image(tensor, rescale=1, rois=None, labels=None):
    """A ``Summary.Image`` (PNG) of a uint8 HWC array.

    >>> make_image(np.zeros((2, 3, 3), np.uint8)).colorspace
    3
    """
    from PIL import Image

    height, width, channels = tensor.shape
    picture = Image.fromarray(tensor)
    if rois is not None:
        picture = draw_boxes(picture, rois, labels=labels)
    size = (int(width * rescale), int(height * rescale))
    if size != picture.size:
        picture = picture.resize(size, Image.Resampling.LANCZOS)
    with io.BytesIO() as buffer:
        picture.save(buffer, format="PNG")
        encoded = buffer.getvalue()
    return Summary.Image(height=height, width=width, colorspace=channels,
                         encoded_image_string=encoded)


def video(tag, tensor, fps=4):
    """A video summary (an animated GIF, needs moviepy) of a BTCHW ``tensor``."""
    frames = _to_uint8(prepare_video(make_np(tensor)))
    return Summary(value=[Summary.Value(tag=tag, image=make_video(frames, fps))])


def make_video(tensor, fps):
    """A ``Summary.Image`` holding THWC uint8 frames as a GIF; like PyTorch, only a
    printed notice (and no image) when moviepy or its ``editor`` module is missing."""
    try:
        import moviepy  # noqa: F401
    except ImportError:
        print("add_video needs package moviepy")
        return None
    try:
        from moviepy import editor
    except ImportError:
        print("moviepy is installed, but can't import moviepy.editor.",
              "Some packages could be missing [imageio, requests]")
        return None
    import tempfile

    _, height, width, channels = tensor.shape
    clip = editor.ImageSequenceClip(list(tensor), fps=fps)
    with tempfile.NamedTemporaryFile(suffix=".gif") as f:
        # moviepy's keyword for silencing its progress output changed across versions
        try:
            clip.write_gif(f.name, verbose=False, logger=None)
        except TypeError:
            try:
                clip.write_gif(f.name, verbose=False, progress_bar=False)
            except TypeError:
                clip.write_gif(f.name, verbose=False)
        f.seek(0)
        encoded = f.read()
    return Summary.Image(height=height, width=width, colorspace=channels,
                         encoded_image_string=encoded)


def audio(tag, tensor, sample_rate=44100):
    """An audio summary (mono 16-bit WAV) of samples in [-1, 1] (others are clipped).

    >>> audio("a", np.zeros(8), sample_rate=8000).value[0].audio.length_frames
    8
    """
    import wave

    samples = make_np(tensor).squeeze()
    if abs(samples).max() > 1:
        print("warning: audio amplitude out of range, auto clipped.")
        samples = samples.clip(-1, 1)
    if samples.ndim != 1:
        raise AssertionError("input tensor should be 1 dimensional.")
    pcm = (samples * np.iinfo(np.int16).max).astype("<i2")
    with io.BytesIO() as buffer:
        with wave.open(buffer, "wb") as wav:
            wav.setnchannels(1)
            wav.setsampwidth(2)
            wav.setframerate(sample_rate)
            wav.writeframes(pcm.data)
        encoded = buffer.getvalue()
    return Summary(value=[Summary.Value(tag=tag, audio=Summary.Audio(
        sample_rate=sample_rate, num_channels=1, length_frames=pcm.shape[-1],
        encoded_audio_string=encoded, content_type="audio/wav"))])


# --- text, layouts, PR curves ---------------------------------------------------------

def text(tag, text):
    """A text summary (markdown in TensorBoard), tagged ``<tag>/text_summary``.

    >>> text("note", "hi").value[0].tensor.string_val
    [b'hi']
    """
    proto = TensorProto(dtype="DT_STRING", string_val=[text.encode(encoding="utf_8")],
                        tensor_shape=_shape([1]))
    metadata = _plugin_metadata("text", TextPluginData(version=0).SerializeToString())
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=metadata,
                                        tensor=proto)])


def custom_scalars(layout):
    """The custom-scalars layout summary: ``{category: {title: [kind, tags]}}``, kind
    ``"Multiline"`` (any tags) or ``"Margin"`` (tags value, lower, upper).

    >>> custom_scalars({"c": {"t": ["Multiline", ["a"]]}}).value[0].tag
    'custom_scalars__config__'
    """
    categories = []
    for category, charts in layout.items():
        protos = []
        for title, (kind, tags) in ((t, spec[:2]) for t, spec in charts.items()):
            if kind == "Margin":
                if len(tags) != 3:
                    raise AssertionError("len(tags) != 3")
                series = layout_pb2.MarginChartContent.Series(value=tags[0], lower=tags[1],
                                                               upper=tags[2])
                protos.append(layout_pb2.Chart(
                    title=title, margin=layout_pb2.MarginChartContent(series=[series])))
            else:
                protos.append(layout_pb2.Chart(
                    title=title, multiline=layout_pb2.MultilineChartContent(tag=tags)))
        categories.append(layout_pb2.Category(title=category, chart=protos))
    proto = TensorProto(dtype="DT_STRING", tensor_shape=TensorShapeProto(), string_val=[
        layout_pb2.Layout(category=categories).SerializeToString()])
    return Summary(value=[Summary.Value(tag="custom_scalars__config__", tensor=proto,
                                        metadata=_plugin_metadata("custom_scalars"))])


def _pr_summary(tag, data, num_thresholds):
    content = PrCurvePluginData(version=0, num_thresholds=num_thresholds).SerializeToString()
    proto = TensorProto(dtype="DT_FLOAT", float_val=data.reshape(-1).tolist(),
                        tensor_shape=_shape(data.shape[:2]))
    return Summary(value=[Summary.Value(tag=tag, metadata=_plugin_metadata("pr_curves", content),
                                        tensor=proto)])


def pr_curve_raw(tag, tp, fp, tn, fn, precision, recall, num_thresholds=127, weights=None):
    """A PR-curve summary from its six per-threshold series (``weights`` unused, as in
    PyTorch); at most 127 thresholds are recorded.

    >>> s = pr_curve_raw("pr", [2, 1], [1, 0], [0, 1], [0, 1], [0.67, 1.0], [1.0, 0.5], 2)
    >>> [d.size for d in s.value[0].tensor.tensor_shape.dim]
    [6, 2]
    """
    return _pr_summary(tag, np.stack((tp, fp, tn, fn, precision, recall)),
                       min(num_thresholds, 127))


def pr_curve(tag, labels, predictions, num_thresholds=127, weights=None):
    """A PR-curve summary of binary ``labels`` against ``predictions`` in [0, 1].

    >>> s = pr_curve("pr", np.array([1, 0]), np.array([0.9, 0.2]), num_thresholds=3)
    >>> [d.size for d in s.value[0].tensor.tensor_shape.dim]
    [6, 3]
    """
    num_thresholds = min(num_thresholds, 127)
    return _pr_summary(tag, compute_curve(labels, predictions, num_thresholds, weights),
                       num_thresholds)


def compute_curve(labels, predictions, num_thresholds=None, weights=None):
    """Rows tp, fp, tn, fn, precision, recall at ``num_thresholds`` thresholds evenly
    spaced over [0, 1] (a prediction counts as positive at thresholds up to its own).

    >>> compute_curve(np.array([1, 0]), np.array([0.9, 0.2]), 2)[:, 0].tolist()
    [1.0, 1.0, 0.0, 0.0, 0.5, 1.0]
    """
    if weights is None:
        weights = 1.0
    # a count of exactly zero would divide by zero in precision/recall
    smallest = 1e-7
    buckets = np.int32(np.floor(predictions * (num_thresholds - 1)))
    positive = labels.astype(np.float64)

    def per_bucket(w):
        counts, _ = np.histogram(buckets, bins=num_thresholds, range=(0, num_thresholds - 1),
                                 weights=w)
        return np.cumsum(counts[::-1])[::-1]  # counts at or above each threshold

    tp = per_bucket(positive * weights)
    fp = per_bucket((1.0 - positive) * weights)
    tn = fp[0] - fp
    fn = tp[0] - tp
    precision = tp / np.maximum(smallest, tp + fp)
    recall = tp / np.maximum(smallest, tp + fn)
    return np.stack((tp, fp, tn, fn, precision, recall))


# --- hyperparameters, meshes ----------------------------------------------------------

def _discrete_domain(values, field):
    if values is None:
        return None
    return struct_pb2.ListValue(values=[struct_pb2.Value(**{field: v}) for v in values])


def _hparams_summary(tag, **content):
    from tensorboard.plugins.hparams.metadata import PLUGIN_DATA_VERSION, PLUGIN_NAME
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData

    data = HParamsPluginData(version=PLUGIN_DATA_VERSION, **content).SerializeToString()
    return Summary(value=[Summary.Value(tag=tag, metadata=_plugin_metadata(PLUGIN_NAME, data))])


def _check_hparam_inputs(hparam_dict, metric_dict, domains):
    for name, given in (("hparam_dict", hparam_dict), ("metric_dict", metric_dict)):
        if not isinstance(given, dict):
            raise TypeError(f"parameter: {name} should be a dictionary, nothing logged.")
    if not isinstance(domains, dict):
        raise TypeError(
            "parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, values in domains.items():
        if (k not in hparam_dict or not isinstance(values, list)
                or not all(isinstance(d, type(hparam_dict[k])) for d in values)):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of "
                            f"same type as hparam_dict[{k}].")


def hparams(hparam_dict=None, metric_dict=None, hparam_domain_discrete=None):
    """The three hparams-plugin summaries (experiment, session start, session end) of one
    run: numbers (bools too, as in PyTorch) and one-element tensors as floats, strings as
    strings; ``None`` values are left out.

    >>> exp, start, end = hparams({"lr": 0.1}, {"loss": 0.5})
    >>> exp.value[0].tag, start.value[0].tag, end.value[0].tag
    ('_hparams_/experiment', '_hparams_/session_start_info', '_hparams_/session_end_info')
    """
    from tensorboard.plugins.hparams import metadata
    from tensorboard.plugins.hparams.api_pb2 import (DataType, Experiment, HParamInfo,
                                                     MetricInfo, MetricName, Status)
    from tensorboard.plugins.hparams.plugin_data_pb2 import SessionEndInfo, SessionStartInfo

    domains = hparam_domain_discrete or {}
    _check_hparam_inputs(hparam_dict, metric_dict, domains)
    infos = []
    start = SessionStartInfo()
    for k, v in hparam_dict.items():
        if v is None:
            continue
        # bool is an int, so booleans are logged as numbers (PyTorch does the same)
        if isinstance(v, (int, float)):
            start.hparams[k].number_value = v
            kind, field = "DATA_TYPE_FLOAT64", "number_value"
        elif isinstance(v, str):
            start.hparams[k].string_value = v
            kind, field = "DATA_TYPE_STRING", "string_value"
        elif isinstance(v, Tensor):
            start.hparams[k].number_value = make_np(v)[0]
            infos.append(HParamInfo(name=k, type=DataType.Value("DATA_TYPE_FLOAT64")))
            continue
        else:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        infos.append(HParamInfo(name=k, type=DataType.Value(kind),
                                domain_discrete=_discrete_domain(domains.get(k), field)))
    experiment = Experiment(hparam_infos=infos,
                            metric_infos=[MetricInfo(name=MetricName(tag=k))
                                          for k in metric_dict])
    return (_hparams_summary(metadata.EXPERIMENT_TAG, experiment=experiment),
            _hparams_summary(metadata.SESSION_START_INFO_TAG, session_start_info=start),
            _hparams_summary(metadata.SESSION_END_INFO_TAG, session_end_info=SessionEndInfo(
                status=Status.Value("STATUS_SUCCESS"))))


def _mesh_component(name, display_name, description, values, content_type, components,
                    json_config):
    from tensorboard.plugins.mesh import metadata

    values = as_tensor(values)
    meta = metadata.create_summary_metadata(name, display_name, content_type, components,
                                            values.shape, description,
                                            json_config=json_config)
    proto = TensorProto(dtype="DT_FLOAT", float_val=values.reshape(-1).tolist(),
                        tensor_shape=_shape(values.shape[:3]))
    return Summary.Value(tag=metadata.get_instance_name(name, content_type), tensor=proto,
                         metadata=meta)


def mesh(tag, vertices, colors, faces, config_dict, display_name=None, description=None):
    """A mesh-plugin summary: BxNx3 ``vertices`` with optional ``faces`` (vertex indices)
    and ``colors`` (RGB per vertex); ``config_dict`` holds three.js settings.

    >>> s = mesh("m", np.zeros((1, 3, 3)), None, None, None)
    >>> s.value[0].tag
    'm_VERTEX'
    """
    from tensorboard.plugins.mesh import metadata
    from tensorboard.plugins.mesh.plugin_data_pb2 import MeshPluginData

    json_config = "{}" if config_dict is None else json.dumps(config_dict, sort_keys=True)
    parts = [(values, kind) for values, kind in ((vertices, MeshPluginData.VERTEX),
                                                 (faces, MeshPluginData.FACE),
                                                 (colors, MeshPluginData.COLOR))
             if values is not None]
    components = metadata.get_components_bitmask([kind for _, kind in parts])
    return Summary(value=[_mesh_component(tag, display_name, description, values, kind,
                                          components, json_config)
                          for values, kind in parts])
