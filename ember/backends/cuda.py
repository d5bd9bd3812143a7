"""``ember.backends.cuda``: not built; ``matmul.allow_tf32`` and friends are settable
flags so scripts that set them run."""


class _MatmulFlags:
    """Flags of CUDA matmuls: accepted and kept, they select nothing without CUDA."""

    def __init__(self):
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True


matmul = _MatmulFlags()


def is_built():
    return False
