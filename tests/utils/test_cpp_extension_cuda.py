"""cuda_sources and .cu files: refused with what to do instead (ember compiles no CUDA)."""
import pytest

import ember
from ember.utils.cpp_extension import load, load_inline


@pytest.mark.skipif(ember.cuda.is_available(), reason="CUDA (CuPy) is available")
def test_cuda_sources_need_cuda():
    with pytest.raises(RuntimeError, match="^Error building extension 'k': cuda_sources need "
                                           "CUDA, and this ember has none"):
        load_inline("k", "", cuda_sources="__global__ void k() {}", functions="k")
    with pytest.raises(RuntimeError, match="cuda_sources need CUDA"):
        load("k", ["kernel.cu"])


def test_with_cuda_points_to_cupy(fake_cuda):
    with pytest.raises(NotImplementedError, match=r"cupy\.RawModule\(code=\.\.\.\)"):
        load_inline("k", "", cuda_sources=["__global__ void k() {}"])
    with pytest.raises(NotImplementedError, match="does not compile cuda_sources"):
        load_inline("k", "", with_cuda=True)
