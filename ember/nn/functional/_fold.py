"""F.unfold (im2col) and F.fold (col2im) on 2-D images, with PyTorch's checks and wording."""
from ..._ops.vision_ops import FoldGeom, Im2Col, Col2Im

__all__ = ["unfold", "fold"]


def _pair(value, name):
    if isinstance(value, int):
        return (value, value)
    value = tuple(value)
    if len(value) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(value)}")
    return value


def _sizes(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def _trunc_div(a, b):
    """C++ integer division (rounds towards zero), as PyTorch's shape checks compute."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _geometry(kernel_size, dilation, padding, stride):
    ksize = _pair(kernel_size, "kernel_size")
    dilation = _pair(dilation, "dilation")
    padding = _pair(padding, "padding")
    stride = _pair(stride, "stride")
    if min(ksize) <= 0:
        raise RuntimeError("kernel size should be greater than zero, but got kernel_height: {} "
                           "kernel_width: {}".format(*ksize))
    if min(stride) <= 0:
        raise RuntimeError("stride should be greater than zero, but got stride_height: {} "
                           "stride_width: {}".format(*stride))
    if min(dilation) <= 0:
        raise RuntimeError("dilation should be greater than zero, but got dilation_height: {} "
                           "dilation_width: {}".format(*dilation))
    if min(padding) < 0:
        raise RuntimeError("padding should be non-negative, but got pad_height: {} "
                           "pad_width: {}".format(*padding))
    return ksize, dilation, padding, stride


def _blocks(image, ksize, dilation, padding, stride):
    return tuple(_trunc_div(n + 2 * p - (d * (k - 1) + 1), s) + 1
                 for n, k, d, p, s in zip(image, ksize, dilation, padding, stride))


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extract sliding blocks: (N, C, H, W) -> (N, C * kh * kw, L), L the number of blocks
    (an unbatched (C, H, W) input gives (C * kh * kw, L)).

    >>> import ember
    >>> ember.nn.functional.unfold(ember.arange(9.).reshape(1, 1, 3, 3), 2)
    tensor([[[0., 1., 3., 4.],
             [1., 2., 4., 5.],
             [3., 4., 6., 7.],
             [4., 5., 7., 8.]]])
    """
    dim = input.dim()
    if dim < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-dim}, "
                         f"{dim - 1}], but got 2)")
    ksize, dilation, padding, stride = _geometry(kernel_size, dilation, padding, stride)
    if dim not in (3, 4) or any(n == 0 for n in input.shape[dim - 3:]):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size "
                           f"and other non-zero dimensions for input, but got: "
                           f"{_sizes(input.shape)}")
    image = tuple(input.shape[-2:])
    blocks = _blocks(image, ksize, dilation, padding, stride)
    if min(blocks) < 1:
        raise RuntimeError(f"Given input with spatial size {image}, kernel_size={ksize}, "
                           f"dilation={dilation}, padding={padding}, calculated shape of the "
                           f"array of sliding blocks as {blocks}, but its components must be at "
                           f"least one.")
    batched = dim == 4
    x = input if batched else input.unsqueeze(0)
    out = Im2Col.apply(x, FoldGeom(ksize, dilation, padding, stride, image))
    return out if batched else out.squeeze(0)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sum sliding blocks back into an image: (N, C * kh * kw, L) -> (N, C, *output_size)
    (the adjoint of ``unfold``; overlapping blocks add up).

    >>> import ember
    >>> ember.nn.functional.fold(ember.ones(1, 4, 4), (3, 3), 2)
    tensor([[[[1., 2., 1.],
              [2., 4., 2.],
              [1., 2., 1.]]]])
    """
    image = _pair(output_size, "output_size")
    ksize, dilation, padding, stride = _geometry(kernel_size, dilation, padding, stride)
    dim = input.dim()
    if dim not in (2, 3) or any(n == 0 for n in input.shape[dim - 2:]):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           f"batch size and non-zero dimensions for input, but got: "
                           f"{_sizes(input.shape)}")
    rows, length = input.shape[-2:]
    kk = ksize[0] * ksize[1]
    if rows % kk:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={rows} and "
                           f"kernel_size={ksize}.")
    blocks = _blocks(image, ksize, dilation, padding, stride)
    if blocks[0] * blocks[1] != length:
        raise RuntimeError(f"Given output_size={image}, kernel_size={ksize}, "
                           f"dilation={dilation}, padding={padding}, stride={stride}, expected "
                           f"size of input's dimension 2 to match the calculated number of "
                           f"sliding blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}"
                           f", but got input.size(2)={length}.")
    if min(blocks) < 1:  # e.g. 0 * 5 blocks and an empty input
        raise RuntimeError(f"Given output_size={image}, kernel_size={ksize}, "
                           f"dilation={dilation}, padding={padding}, stride={stride}, "
                           f"calculated shape of the array of sliding blocks as {blocks}, but "
                           f"its components must be at least one.")
    batched = dim == 3
    x = input if batched else input.unsqueeze(0)
    out = Col2Im.apply(x, FoldGeom(ksize, dilation, padding, stride, image))
    return out if batched else out.squeeze(0)
