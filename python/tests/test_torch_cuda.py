"""torch CUDA tensors on the cuda backend: read and written where they are
(no copy), and enqueued on torch's current stream as a torch op is: after
the work queued there, before the work queued there later, the host not
waiting. Skipped without a GPU (CI has none), and without torch outside CI."""

import pytest

import hir

from needs_torch import import_torch
from test_compile import BINARY

torch = import_torch()
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
    torch.cuda.current_stream().synchronize()
    assert out.data_ptr() == pointer
    torch.testing.assert_close(out[4:8], a + b)
    assert hir.world()["backend"] == "cuda"


def test_integer_tensors_on_the_gpu():
    # int32 and int64 CUDA tensors, read and written in place, exact with
    # wrapping (the product passes 2^31 for int32).
    for dtype, mlir in ((torch.int32, "i32"), (torch.int64, "i64")):
        program = hir.compile(BINARY.replace("fusion.add", "fusion.mul").replace("f32", mlir))
        a = torch.full((4, 8), 2**30 + 3, dtype=dtype, device="cuda")
        b = torch.arange(32, dtype=dtype, device="cuda").reshape(4, 8)
        out = torch.empty(4, 8, dtype=dtype, device="cuda")
        program(a, b, out)
        torch.cuda.current_stream().synchronize()
        assert torch.equal(out, a * b)


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


def test_a_call_is_captured_by_torch_cuda_graph_and_replayed():
    # torch's recipe: warm up on a side stream, capture, replay. The program
    # forks pool streams (its stream axis); each replay must compute the
    # product of the inputs of the time. Small integers: f32 products exact.
    program = hir.compile(MATMUL.replace("4096", "512"), num_streams=2)
    a = torch.randint(-4, 5, (512, 512), device="cuda").float()
    b = torch.randint(-4, 5, (512, 512), device="cuda").float()
    out = torch.empty(512, 512, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            program(a, b, out)
    torch.cuda.current_stream().wait_stream(side)
    out.fill_(float("nan"))
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        program(a, b, out)
    torch.cuda.synchronize()
    assert out.isnan().all(), "capturing ran the call"
    for replay in range(1000):
        a.random_(-4, 5)
        graph.replay()
        assert torch.equal(out, a @ b), f"replay {replay}"


def test_a_tensor_on_the_host_is_refused_on_the_cuda_backend():
    program = hir.compile(BINARY)
    a = torch.ones(4, 8, device="cuda")
    program(a, a)
    with pytest.raises(ValueError, match="host memory, but the cuda backend runs rank 0 on GPU 0"):
        program(a, torch.ones(4, 8))


# GPU cycles of torch.cuda._sleep: at least 50 ms at any clock up to 4 GHz.
SLEEP = 200_000_000


def _enqueued_on(stream):
    """On `stream` (current): a long sleep, then x written, the program on
    x, and torch work on its output. The call must return with the stream
    still busy (the host did not wait), and once the stream is idle the
    output must be the sum of the x written after the sleep (the call was
    ordered after it, not run on another stream) and the torch work after
    the call must have seen it (the call's work joined back into the stream)."""
    program = hir.compile(BINARY)
    x = torch.zeros(4, 8, device="cuda")
    b = torch.full((4, 8), 0.5, device="cuda")
    program(x, b)  # the world starts (context, kernels) before the race below
    torch.cuda.synchronize()
    with torch.cuda.stream(stream):
        torch.cuda._sleep(SLEEP)
        x.copy_(torch.arange(32, dtype=torch.float32, device="cuda").reshape(4, 8))
        c = program(x, b)
        assert not stream.query(), "the call waited for the stream's work"
        d = c * 2
    stream.synchronize()
    expected = torch.arange(32, dtype=torch.float32, device="cuda").reshape(4, 8) + 0.5
    torch.testing.assert_close(c, expected)
    torch.testing.assert_close(d, 2 * expected)


def test_is_enqueued_on_a_side_stream_without_waiting():
    _enqueued_on(torch.cuda.Stream())


def test_is_enqueued_on_the_default_stream_without_waiting():
    _enqueued_on(torch.cuda.default_stream())


def test_calls_on_two_streams_run_in_call_order():
    program = hir.compile(BINARY)
    one = torch.ones(4, 8, device="cuda")
    x = torch.zeros(4, 8, device="cuda")
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    torch.cuda.synchronize()
    for call in range(200):
        with torch.cuda.stream(streams[call % 2]):
            if call == 0:
                torch.cuda._sleep(SLEEP)
            x = program(x, one)
            # x was made on this stream; the next call reads it on the other.
            x.record_stream(streams[(call + 1) % 2])
    torch.cuda.synchronize()
    torch.testing.assert_close(x, torch.full((4, 8), 200.0, device="cuda"))


def test_a_loop_of_calls_stays_correct():
    # More calls than the runtime keeps outstanding: it retires the ended
    # ones, and waits for the oldest when too many are in flight.
    program = hir.compile(BINARY)
    one = torch.ones(4, 8, device="cuda")
    x = torch.zeros(4, 8, device="cuda")
    out = torch.empty(4, 8, device="cuda")
    for _ in range(5000):
        program(x, one, out)
        x, out = out, x
    torch.cuda.current_stream().synchronize()
    torch.testing.assert_close(x, torch.full((4, 8), 5000.0, device="cuda"))


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_the_torch_op_under_torch_compile_on_the_gpu(backend):
    # The op's real implementation on CUDA tensors, enqueued on the
    # current stream between inductor's kernels.
    op = hir.compile(BINARY).as_torch_op()
    compiled = torch.compile(lambda a, b: op(a * 2.0, b).relu() + 1.0, fullgraph=True, backend=backend)
    a = torch.randn(4, 8, device="cuda")
    b = torch.randn(4, 8, device="cuda")
    got = compiled(a, b)
    assert got.device == a.device
    torch.testing.assert_close(got, (a * 2.0 + b).relu() + 1.0)


@pytest.mark.parametrize("dtype, tolerance", [(torch.float32, 1e-4), (torch.bfloat16, 2e-2)])
def test_the_mlp_trains_on_the_gpu(dtype, tolerance):
    # The differentiable MLP on CUDA tensors, eager and under torch.compile:
    # gradients against float64 autograd on the host, computed apart.
    from test_autograd import mlp, mlp_tensors, reference_gradients, reference_mlp, assert_close_relative

    name = {torch.float32: "f32", torch.bfloat16: "bf16"}[dtype]
    program = hir.compile(mlp(1, name, tokens=64, hidden=128, ffn=256), differentiable=True)
    tensors = mlp_tensors(7, dtype, tokens=64, hidden=128, ffn=256)
    cotangent = torch.randn(64, 128, generator=torch.Generator().manual_seed(8)).to(dtype)
    expected = reference_gradients(reference_mlp, tensors, cotangent)
    for run in (program, torch.compile(program, fullgraph=True, backend="inductor")):
        leaves = [tensor.cuda().requires_grad_() for tensor in tensors]
        y = run(*leaves)
        (y * cotangent.cuda()).sum().backward()
        for label, leaf, e in zip(("x", "w1", "b1", "w2"), leaves, expected):
            assert leaf.grad.is_cuda and leaf.grad.dtype == dtype
            assert_close_relative(leaf.grad.cpu(), e, tolerance, f"d {label} ({name})")
