"""HIR as a rank of a job of processes: a world that cannot start raises
(never a world of one rank in its place), and, with torch, HIR meeting its
peers through the job's torch.distributed store: a gloo process group, and
two torchrun agents on this host acting as two nodes. Each job runs a
bounded time, so that a hang fails instead of stalling CI."""

import os
import socket
import subprocess
import sys

import numpy as np
import pytest

import hir

from test_compile import BINARY

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "distributed_worker.py")
# A job of two ranks compiles two programs in each: well within this.
JOB_SECONDS = 300


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def assert_calls_raise(why):
    """A call after a failed init raises, saying why, rather than running on
    a world of one rank."""
    program = hir.compile(BINARY)
    a = np.ones((4, 8), np.float32)
    with pytest.raises(hir.HirError, match="the last hir.init\\* failed") as raised:
        program(a, a)
    assert why in str(raised.value)
    assert hir.world() is None


def test_a_rank_that_cannot_join_raises_naming_it_and_calls_raise():
    # Rank 1 of 2 connects to a store that nobody hosts.
    environ = {"RANK": "1", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port())}
    with pytest.raises(hir.HirError, match="rank 1: joining the job: timed out") as raised:
        hir.init_from_env(environ, backend="cpu", timeout=1)
    assert "to connect to the store at 127.0.0.1" in str(raised.value)
    assert_calls_raise("rank 1: joining the job")


def test_a_bad_environment_raises_and_calls_raise():
    with pytest.raises(hir.HirError, match="RANK is set but WORLD_SIZE is not"):
        hir.init_from_env({"RANK": "0"})
    assert_calls_raise("RANK is set but WORLD_SIZE is not")
    # A successful init clears it.
    hir.init(world_size=1)
    program = hir.compile(BINARY)
    a = np.arange(32, dtype=np.float32).reshape(4, 8)
    np.testing.assert_array_equal(program(a, a), a + a)


def test_init_from_torch_without_a_job_raises_and_calls_raise(monkeypatch):
    pytest.importorskip("torch")
    for name in ("RANK", "WORLD_SIZE"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(hir.HirError, match="torch.distributed is not initialized and RANK and WORLD_SIZE"):
        hir.init_from_torch()
    assert_calls_raise("call torch.distributed.init_process_group first")


def run_job(commands, environ):
    """Runs the ranks' commands at once; each one's (exit code, output)."""
    processes = [
        subprocess.Popen(
            command, env={**os.environ, **extra}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        for command, extra in zip(commands, environ)
    ]
    results = []
    try:
        for process in processes:
            output, _ = process.communicate(timeout=JOB_SECONDS)
            results.append((process.returncode, output))
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
    return results


def check_ranks(results, ranks):
    for rank, (code, output) in enumerate(results):
        assert code == 0, f"process {rank} exited {code}:\n{output}"
    for rank in range(ranks):
        assert any(f"rank {rank}: ok" in output for _, output in results), "\n".join(o for _, o in results)


def gloo_job(mode):
    port = str(free_port())
    environ = [
        {"RANK": str(rank), "WORLD_SIZE": "2", "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port}
        for rank in range(2)
    ]
    return run_job([[sys.executable, WORKER, mode]] * 2, environ)


def test_a_gloo_process_group_job_runs_the_tp_mlp():
    pytest.importorskip("torch")
    check_ranks(gloo_job("gloo"), 2)


def test_a_gloo_job_differentiates_the_tp_mlp():
    # Forward and backward on each rank's shards, as plain tensors and as
    # DTensors over the two ranks.
    pytest.importorskip("torch")
    check_ranks(gloo_job("gloo-grad"), 2)


def test_a_gloo_job_trains_the_transformer_block():
    # SGD steps of the block on 2 ranks (heads, tokens and the MLP split),
    # fused attention and its math, against torch's whole training.
    pytest.importorskip("torch")
    from test_train_block import hir_bench

    hir_bench()  # a skip where hir-bench is not built
    check_ranks(gloo_job("gloo-train"), 2)


def test_a_rank_given_bad_arrays_fails_the_others_at_once():
    # Rank 1's ValueError is posted to the job's store: rank 0's collective
    # ends with a RunError naming rank 1, not at its timeout.
    pytest.importorskip("torch")
    check_ranks(gloo_job("gloo-bad-rank"), 2)


def test_two_torchrun_agents_as_two_nodes_run_the_tp_mlp():
    pytest.importorskip("torch")
    endpoint = f"127.0.0.1:{free_port()}"
    agent = [
        sys.executable, "-m", "torch.distributed.run",
        "--nnodes", "2", "--nproc-per-node", "1",
        "--rdzv-backend", "c10d", "--rdzv-endpoint", endpoint,
        "--local-addr", "127.0.0.1", "--max-restarts", "0",
    ]  # fmt: skip
    commands = [agent + ["--node-rank", str(node), WORKER, "torchrun"] for node in range(2)]
    # The agents set the ranks' variables; none of this process's may leak in.
    clean = {name: "" for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")}
    environ = [{**clean, "OMP_NUM_THREADS": "1"}] * 2
    results = run_job(commands, environ)
    check_ranks(results, 2)
