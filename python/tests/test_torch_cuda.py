"""torch CUDA tensors on the cuda backend: read and written where they are
(no copy) and ordered after the work queued on torch's current stream.
Skipped without torch or a GPU (CI has neither)."""

import time

import pytest

import hir

from test_compile import BINARY

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

MATMUL = """
fusion.mesh @dev = [0]
func.func @mm(%a: tensor<4096x4096xf32, #fusion.dist<@dev, [serial, serial]>>,
              %b: tensor<4096x4096xf32, #fusion.dist<@dev, [serial, serial]>>)
    -> tensor<4096x4096xf32, #fusion.dist<@dev, [stream, serial]>> {
  %c = fusion.matmul %a, %b : tensor<4096x4096xf32, #fusion.dist<@dev, [serial, serial]>>,
                              tensor<4096x4096xf32, #fusion.dist<@dev, [serial, serial]>>
                           -> tensor<4096x4096xf32, #fusion.dist<@dev, [stream, serial]>>
  return %c : tensor<4096x4096xf32, #fusion.dist<@dev, [stream, serial]>>
}
"""


def test_writes_the_given_tensor_in_place_on_the_gpu():
    program = hir.compile(BINARY)
    a = torch.arange(32, dtype=torch.float32, device="cuda").reshape(4, 8)
    b = torch.full((4, 8), 0.5, device="cuda")
    out = torch.empty(12, 8, device="cuda")
    pointer = out.data_ptr()
    view = out[4:8]
    assert program(a, b, view) is view
    torch.cuda.synchronize()
    assert out.data_ptr() == pointer
    torch.testing.assert_close(out[4:8], a + b)
    assert hir.world()["backend"] == "cuda"


def test_runs_after_the_work_on_the_current_stream():
    # The inputs are written on a side stream by a long chain of kernels that
    # the host does not wait for: a program that read them without ordering
    # itself after that stream would see
    # the zeros they held before.
    program = hir.compile(MATMUL, num_streams=2)
    a = torch.zeros(4096, 4096, device="cuda")
    b = torch.zeros(4096, 4096, device="cuda")
    program(a, b)  # the world starts (contexts, kernels) before the race below
    source = torch.randn(4096, 4096, device="cuda")
    eye = torch.eye(4096, device="cuda")
    stream = torch.cuda.Stream()
    torch.cuda.synchronize()
    with torch.cuda.stream(stream):
        for _ in range(40):  # ~40 f32 GEMMs, about 0.1 s, queued ahead of the copies
            source = source @ eye
        a.copy_(source)
        b.copy_(eye)
        c = program(a, b)
    stream.synchronize()
    torch.testing.assert_close(c, source, rtol=1e-5, atol=1e-5)


def test_a_tensor_on_the_host_is_refused_on_the_cuda_backend():
    program = hir.compile(BINARY)
    a = torch.ones(4, 8, device="cuda")
    program(a, a)
    with pytest.raises(ValueError, match="host memory, but the cuda backend runs rank 0 on GPU 0"):
        program(a, torch.ones(4, 8))
