# The host cost of calling a compiled HIR program from Python on CUDA
# tensors (issue 37's "cheap calls"), beside the same work as torch eager
# ops: a loop of K calls, each enqueued on torch's current stream without
# waiting; the time per call is the loop's wall time over K (median of R
# loops, after one untimed), then the stream is synchronized and the last
# output checked against torch. Programs: `add` (one elementwise kernel,
# c = a + b on [4, 8] f32) and `mlp` (one rank of the TP MLP's math at a
# tiny size: matmul, gelu, matmul). The last column is the same call
# captured by torch.cuda.graph, one replay a call.
# Run on the device machine:
#   PYTHONPATH=<site-packages with hir> /opt/torch/.venv/bin/python tools/python-call-overhead.py [K] [R]
import statistics
import sys
import time

import torch

import hir

ADD = """
fusion.mesh @dev = [0]
func.func @add(%a: tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>,
               %b: tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>)
    -> tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>> {
  %c = fusion.add %a, %b : tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>,
                           tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>
                        -> tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>
  return %c : tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>
}
"""


def mlp_program():
    b = hir.Builder("mlp")
    x = b.input("x", (64, 32), "f32")
    w1 = b.input("w1", (32, 128), "f32")
    w2 = b.input("w2", (128, 32), "f32")
    b.output(b.matmul(b.gelu(b.matmul(x, w1)), w2))
    return b


def captured(call):
    """`call` captured by torch.cuda.graph (after a warm-up on a side
    stream, torch's recipe); returns the graph's replay."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        call()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        call()
    return graph.replay


def per_call_us(call, calls, repeats):
    call()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        times.append((time.perf_counter() - start) / calls * 1e6)
        torch.cuda.synchronize()
    return statistics.median(times)


def main():
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    print(f"hir {hir.__version__}, torch {torch.__version__} on {torch.cuda.get_device_name()}: "
          f"{calls} calls a loop, median of {repeats} loops")
    print("| program | HIR µs a call | torch eager µs a call | HIR in a torch.cuda.graph µs a replay |")
    print("|---|---|---|---|")
    a = torch.randn(4, 8, device="cuda")
    b = torch.randn(4, 8, device="cuda")
    out = torch.empty(4, 8, device="cuda")
    add = hir.compile(ADD)
    hir_us = per_call_us(lambda: add(a, b, out), calls, repeats)
    torch.testing.assert_close(out, a + b, rtol=0, atol=0)
    torch_us = per_call_us(lambda: torch.add(a, b, out=out), calls, repeats)
    graph_us = per_call_us(captured(lambda: add(a, b, out)), calls, repeats)
    torch.testing.assert_close(out, a + b, rtol=0, atol=0)
    print(f"| add [4, 8] f32 | {hir_us:.1f} | {torch_us:.1f} | {graph_us:.1f} |")

    x = torch.randn(64, 32, device="cuda")
    w1 = torch.randn(32, 128, device="cuda") / 8
    w2 = torch.randn(128, 32, device="cuda") / 8
    y = torch.empty(64, 32, device="cuda")
    mlp = hir.compile(mlp_program())
    hir_us = per_call_us(lambda: mlp(x, w1, w2, y), calls, repeats)
    expected = torch.nn.functional.gelu(x @ w1) @ w2
    torch.testing.assert_close(y, expected, rtol=1e-3, atol=1e-3)
    torch_us = per_call_us(lambda: torch.matmul(torch.nn.functional.gelu(x @ w1), w2, out=y),
                           calls, repeats)
    graph_us = per_call_us(captured(lambda: mlp(x, w1, w2, y)), calls, repeats)
    torch.testing.assert_close(y, expected, rtol=1e-3, atol=1e-3)
    print(f"| mlp 64x32x128 f32 | {hir_us:.1f} | {torch_us:.1f} | {graph_us:.1f} |")


if __name__ == "__main__":
    main()
