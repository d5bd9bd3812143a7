"""Which ops autocast casts, and to what: PyTorch 2.x's op lists, per device type.

Keys are PyTorch's operator names (``aten::<name>``): ``ember.mm``, ``Tensor.mm`` and
``x @ y`` are all "mm"/"matmul"; functions of ``ember.linalg`` are "linalg_<name>". The
policies:

- ``LOWER``: floating inputs on the device (but float64 ones) are cast to the region's
  lower-precision dtype (``ember.get_autocast_dtype(device)``).
- ``FP32``: they are cast to float32.
- ``FP32_FIRST``: only the first argument, and only when no ``dtype=`` is given (PyTorch's
  "set the output dtype to float32" ops: softmax, sum, cumsum, ...: computing in float32
  from the cast input gives the same numbers).
- ``PROMOTE``: they are cast to the widest floating dtype among them (float32 beats the
  lower one; float64 is left alone).
- ``BANNED``: raises (binary_cross_entropy on CUDA).
- a function ``rule(args, kwargs) -> policy or None``: the policy depends on the call
  (``F.pad``'s mode, ``F.interpolate``'s mode).

Ops missing from a table run in their inputs' dtypes (type promotion as usual).
"""

LOWER, FP32, FP32_FIRST, PROMOTE, BANNED = "lower", "fp32", "fp32_first", "promote", "banned"

BANNED_MESSAGE = (
    "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
    "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
    "In this case, combine the two layers using "
    "torch.nn.functional.binary_cross_entropy_with_logits\n"
    "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
    "safe to autocast.")


def _all(policy, names):
    return dict.fromkeys(names.split(), policy)


def _pad_dims(args, kwargs):
    pad = args[1] if len(args) > 1 else kwargs.get("pad", ())
    mode = args[2] if len(args) > 2 else kwargs.get("mode", "constant")
    return mode, len(pad) // 2


def _cpu_pad(args, kwargs):
    # PyTorch's CPU list has reflection_pad1d/2d and replication_pad1d/2d/3d
    mode, dims = _pad_dims(args, kwargs)
    if (mode == "reflect" and dims in (1, 2)) or (mode == "replicate" and dims in (1, 2, 3)):
        return FP32
    return None


def _interpolate_mode(args, kwargs):
    return args[3] if len(args) > 3 else kwargs.get("mode", "nearest")


def _cuda_interpolate(args, kwargs):
    # the upsample_* kernels are on CUDA's float32 list; "area" is an adaptive pooling
    return None if _interpolate_mode(args, kwargs) == "area" else FP32


def _cpu_interpolate(args, kwargs):
    # "area" on 3-d volumes is adaptive_avg_pool3d, on the CPU's float32 list
    if _interpolate_mode(args, kwargs) == "area" and args and getattr(args[0], "ndim", 0) == 5:
        return FP32
    return None


_CPU_LOSSES = _all(FP32, """mse_loss cosine_embedding_loss nll_loss nll_loss2d
    hinge_embedding_loss poisson_nll_loss smooth_l1_loss cross_entropy l1_loss huber_loss
    margin_ranking_loss soft_margin_loss triplet_margin_loss multi_margin_loss ctc_loss kl_div
    multilabel_margin_loss binary_cross_entropy_with_logits binary_cross_entropy""")

CPU = {
    **_all(LOWER, """conv1d conv2d conv3d bmm mm linalg_vecdot baddbmm addmm addbmm linear
        matmul conv_tbc conv_transpose1d conv_transpose2d conv_transpose3d prelu
        scaled_dot_product_attention einsum tensordot chain_matmul linalg_multi_dot lstm"""),
    **_all(FP32, """avg_pool3d grid_sample polar prod quantile nanquantile stft cdist trace
        view_as_complex cholesky cholesky_inverse cholesky_solve inverse lu_solve orgqr ormqr
        pinverse max_pool3d max_unpool2d max_unpool3d adaptive_avg_pool3d
        fractional_max_pool2d fractional_max_pool3d adaptive_max_pool3d geqrf qr svd
        triangular_solve linalg_cond linalg_matrix_rank linalg_solve linalg_cholesky
        linalg_svdvals linalg_eigvals linalg_eigvalsh linalg_inv linalg_householder_product
        linalg_tensorinv linalg_tensorsolve linalg_qr linalg_cholesky_ex linalg_svd linalg_eig
        linalg_eigh linalg_lstsq linalg_inv_ex fft_fft fft_ifft fft_fft2 fft_ifft2 fft_fftn
        fft_ifftn fft_rfft fft_irfft fft_rfft2 fft_irfft2 fft_rfftn fft_irfftn fft_hfft
        fft_ihfft"""),
    **_CPU_LOSSES,
    **_all(PROMOTE, "stack cat index_copy"),
    "pad": _cpu_pad,
    "interpolate": _cpu_interpolate,
}

CUDA = {
    **_all(LOWER, """conv1d conv2d conv3d conv_tbc conv_transpose1d conv_transpose2d
        conv_transpose3d prelu addmm addmv addr matmul einsum mm mv linalg_vecdot linear
        addbmm baddbmm bmm chain_matmul linalg_multi_dot lstm_cell gru_cell rnn_tanh_cell
        rnn_relu_cell scaled_dot_product_attention lstm gru rnn_tanh rnn_relu"""),
    **_all(FP32, """acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt
        sinh tan pow softplus layer_norm group_norm rms_norm cosine_similarity
        poisson_nll_loss cosine_embedding_loss nll_loss nll_loss2d hinge_embedding_loss kl_div
        l1_loss smooth_l1_loss huber_loss mse_loss margin_ranking_loss multilabel_margin_loss
        soft_margin_loss triplet_margin_loss multi_margin_loss
        binary_cross_entropy_with_logits dist pdist cdist renorm logsumexp cross_entropy
        normalize softmin"""),
    **_all(FP32_FIRST, """prod softmax log_softmax cumprod cumsum linalg_vector_norm
        linalg_matrix_norm linalg_norm sum norm"""),
    **_all(PROMOTE, """addcdiv addcmul atan2 bilinear cross linalg_cross dot vdot grid_sample
        index_put tensordot scatter_add"""),
    "binary_cross_entropy": BANNED,
    "interpolate": _cuda_interpolate,
}

TABLES = {"cpu": CPU, "cuda": CUDA}
#: every op some table lists (the one test an unlisted op's call makes)
LISTED = frozenset(CPU) | frozenset(CUDA)

#: entry points that are Python compositions in PyTorch: the ops they call are autocast
#: one by one (every other op runs as one piece, with autocast off inside it)
TRANSPARENT = frozenset({"multi_head_attention_forward", "gumbel_softmax",
                         "local_response_norm", "triplet_margin_with_distance_loss",
                         "gaussian_nll_loss"})

#: ember's names that are another name in PyTorch's lists
ALIASES = {
    "__matmul__": "matmul", "__rmatmul__": "matmul", "__pow__": "pow", "__rpow__": "pow",
    # PyTorch's ``2 / x`` is ``x.reciprocal() * 2``
    "__rtruediv__": "reciprocal", "__rdiv__": "reciprocal",
    "upsample": "interpolate", "upsample_nearest": "interpolate",
    "upsample_bilinear": "interpolate", "special_softmax": "softmax",
    "special_log_softmax": "log_softmax", "special_logsumexp": "logsumexp",
    "special_expm1": "expm1", "special_log1p": "log1p", "linalg_matmul": "matmul",
    "inner": "tensordot",  # a composition of tensordot in PyTorch
}
