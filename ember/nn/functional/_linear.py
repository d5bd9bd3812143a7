"""``F.linear`` and ``F.bilinear``."""
import math

from ... import _functions as _fn
from ...backend import dtypes as _dtypes
from ..._ops.linalg import linear as _linear2d


def linear(input, weight, bias=None):
    """``input @ weight.T + bias`` over the last dimension of ``input``."""
    if weight.dim() != 2:
        out = _fn.matmul(input, weight.t() if weight.dim() == 2 else weight)
        return out if bias is None else out + bias
    shape = tuple(input.shape)
    out_f, in_f = weight.shape
    if input.dim() == 0 or shape[-1] != in_f:
        rows = math.prod(shape[:-1]) if input.dim() else 1
        cols = shape[-1] if input.dim() else 1
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{cols} and "
                           f"{in_f}x{out_f})")
    dt, rows = weight.dtype, math.prod(shape[:-1])  # rows: not -1, in_f may be 0
    if input.dtype is dt is _dtypes.bool_ and in_f and out_f and rows:
        # PyTorch's product (addmm, or mm through matmul) has no bool kernel
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    if input.dtype is dt and dt in _dtypes.FLOAT8:  # PyTorch: float32 sums, one rounding
        if dt is _dtypes.float8_e8m0fnu and in_f and out_f and rows:
            raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for "
                                      "'Float8_e8m0fnu'")
        out = _fn.matmul(input.float(), weight.float().t())
        return (out if bias is None else out + bias.float()).to(dt)
    if input.dtype is dt and (bias is None or (bias.dtype is dt and tuple(bias.shape) ==
                                               (out_f,))):
        if input.dim() == 2:
            return _linear2d(input, weight, bias)
        if input.dim() > 2:
            return _linear2d(input.reshape(rows, in_f), weight, bias).reshape(*shape[:-1], out_f)
    if input.dim() == 2:
        if bias is not None and bias.dim() <= 1:
            return _fn.addmm(bias, input, weight.t())
        out = _fn.mm(input, weight.t())
    elif input.dim() == 1:
        out = _fn.mv(weight, input)
    else:
        out = _fn.mm(input.reshape(rows, in_f), weight.t()).reshape(*shape[:-1], out_f)
    return out if bias is None else out + bias


def bilinear(input1, input2, weight, bias=None):
    """``y[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o]``."""
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} "
                           f"and {input2.dim()}")
    for d in range(input1.dim() - 1):
        if input1.shape[d] != input2.shape[d]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {d}: "
                               f"got {input1.shape[d]} and {input2.shape[d]}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{input1.shape[-1]} but expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{input2.shape[-1]} but expected {weight.shape[2]}")
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[0]} but expected {weight.shape[0]}")
    lead = tuple(input1.shape[:-1])
    x1 = input1.reshape(-1, weight.shape[1])
    x2 = input2.reshape(-1, weight.shape[2])
    # (N, I) @ (I, O*J) -> (N, O, J), then contract J with x2
    o, i, j = weight.shape
    t = _fn.mm(x1, weight.permute(1, 0, 2).reshape(i, o * j)).reshape(-1, o, j)
    out = _fn.bmm(t, x2.unsqueeze(-1)).squeeze(-1)
    if bias is not None:
        out = out + bias
    return out.reshape(*lead, o)


__all__ = ["linear", "bilinear"]
