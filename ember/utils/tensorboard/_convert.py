"""Host NumPy arrays from what the writer is given, and the image/video layouts it logs.

Everything here runs on the host: logged values are copied off their device once
(``.detach().cpu().numpy()``) and the rest is NumPy, as TensorBoard's encoders want.
"""
from __future__ import annotations

import numpy as np

from ...backend import dtypes as _dtypes
from ..._tensor import Tensor


def make_np(x):
    """``x`` (a tensor, NumPy array or Python/NumPy scalar) as a NumPy array on the host.

    >>> import ember
    >>> make_np(ember.tensor([1.0, 2.0], requires_grad=True))
    array([1., 2.], dtype=float32)
    >>> make_np(3)
    array([3])
    """
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])
    if isinstance(x, Tensor):
        if x.device.type == "meta":
            # a meta tensor has no values; PyTorch logs a random stand-in of one element
            return np.random.randn(1)
        if x.dtype == _dtypes.bfloat16:
            # NumPy has no native bfloat16: the encoders below expect a standard float
            x = x.to(_dtypes.float16)
        return x.detach().cpu().numpy()
    raise NotImplementedError(
        f"Got {type(x)}, but numpy array or torch tensor are expected.")


def make_grid(images, ncols=8):
    """N images (N1HW or N3HW) tiled row by row into one 3HW canvas, ``ncols`` wide.

    >>> make_grid(np.ones((3, 1, 2, 2)), ncols=2).shape
    (3, 4, 4)
    """
    if not isinstance(images, np.ndarray):
        raise AssertionError("plugin error, should pass numpy array here")
    if images.shape[1] == 1:
        images = np.concatenate([images] * 3, 1)
    if images.ndim != 4 or images.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    count, _, height, width = images.shape
    ncols = min(count, ncols)
    nrows = -(-count // ncols)
    canvas = np.zeros((3, height * nrows, width * ncols), dtype=images.dtype)
    for i in range(count):
        row, col = divmod(i, ncols)
        canvas[:, row * height:(row + 1) * height, col * width:(col + 1) * width] = images[i]
    return canvas


def convert_to_HWC(array, input_format):  # noqa: N802  (PyTorch's name)
    """``array`` laid out as ``input_format`` (letters of NCHW; N tiles a grid, a single
    channel or none is repeated to RGB) as an HWC array.

    >>> convert_to_HWC(np.zeros((2, 5)), "HW").shape
    (2, 5, 3)
    >>> convert_to_HWC(np.zeros((10, 3, 2, 2)), "NCHW").shape
    (4, 16, 3)
    """
    if len(set(input_format)) != len(input_format):
        raise AssertionError(
            "You can not use the same dimension shorthand twice.             input_format: "
            f"{input_format}")
    if len(array.shape) != len(input_format):
        raise AssertionError(
            "size of input tensor and input format are different.         tensor shape: "
            f"{array.shape}, input_format: {input_format}")
    input_format = input_format.upper()
    if len(input_format) == 4:
        nchw = array.transpose([input_format.find(c) for c in "NCHW"])
        return make_grid(nchw).transpose(1, 2, 0)
    if len(input_format) == 3:
        hwc = array.transpose([input_format.find(c) for c in "HWC"])
        return np.concatenate([hwc] * 3, 2) if hwc.shape[2] == 1 else hwc
    if len(input_format) == 2:
        return np.stack([array.transpose([input_format.find(c) for c in "HW"])] * 3, 2)
    return None  # PyTorch passes other lengths through as nothing


def figure_to_image(figures, close=True):
    """A matplotlib figure (CHW) or a list of them (NCHW) rendered as uint8 RGB."""
    import matplotlib.backends.backend_agg as backend_agg
    import matplotlib.pyplot as plt

    def render(figure):
        canvas = backend_agg.FigureCanvasAgg(figure)
        canvas.draw()
        width, height = figure.canvas.get_width_height()
        rgba = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8).reshape(height, width, 4)
        if close:
            plt.close(figure)
        return np.moveaxis(rgba[:, :, :3], 2, 0)

    if isinstance(figures, list):
        return np.stack([render(f) for f in figures])
    return render(figures)


def prepare_video(video):
    """A BTCHW video as THWC frames: the B clips, padded with blank ones to a power of two
    2**k, tiled in 2**(k // 2) rows (uint8 becomes float in [0, 1]).

    >>> prepare_video(np.zeros((3, 2, 3, 4, 5), np.float32)).shape
    (2, 4, 20, 3)
    >>> prepare_video(np.zeros((8, 2, 3, 4, 5), np.float32)).shape
    (2, 8, 20, 3)
    """
    batch, frames, channels, height, width = video.shape
    if video.dtype == np.uint8:
        video = np.float32(video) / 255.0
    if batch == 0 or batch & (batch - 1):
        padding = (1 << batch.bit_length()) - batch
        video = np.concatenate(
            (video, np.zeros((padding, frames, channels, height, width))), axis=0)
    nrows = 1 << ((batch.bit_length() - 1) // 2)
    ncols = video.shape[0] // nrows
    video = video.reshape(nrows, ncols, frames, channels, height, width)
    return video.transpose(2, 0, 4, 1, 5, 3).reshape(
        frames, nrows * height, ncols * width, channels)
