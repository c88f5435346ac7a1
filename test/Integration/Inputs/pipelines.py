"""Hand-written host-IR pipelines for D ranks, and the check of their outputs.

usage: pipelines.py program KIND D      prints the program for D ranks
       pipelines.py check KIND D DIR    checks the .npy files hir-run --output-dir wrote to DIR

KIND is one of:
  ag-ring        allgather as a ring of coalesced nccl exchanges: at step i rank r sends its
                 slice to rank (r - i) mod D and receives rank (r + i) mod D's, so step 0 is a
                 send to itself and a receive from itself (all of them at D = 1)
  ag-ring-cuda   the same ring with cuda (CUDA-IPC) transfers, each receive posted before its send
  rs-ring        reduce-scatter as a ring of coalesced nccl exchanges: a running sum travels from
                 rank r to rank r - 1, and the last step sends the finished sum to the rank itself
  ag-bcast       allgather as a stream pipeline of broadcasts: iteration i broadcasts rank i's
                 slice, its root the loop index
  rs-reduce      reduce-scatter as a stream pipeline of reduces: iteration i sums every rank's
                 slice i onto rank i, its root the loop index

Every program takes the rank's input (arg0) and writes its output (arg1); the check compares
every rank's output with the allgather or reduce-scatter of all ranks' inputs.
"""
import importlib.util
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree

W = 8  # elements per slice


def head(name, d, args):
    team = ", ".join(str(r) for r in range(d))
    lines = [
        f"func.func @{name}({args}) {{",
        "  %c0 = arith.constant 0 : index",
        "  %c1 = arith.constant 1 : index",
        f"  %cD = arith.constant {d} : index",
        "  %r = host.rank : index",
    ]
    return team, lines


SLICE = f"memref<{W}xf32, strided<[1], offset: ?>>"


def stream_loop(body):
    """Iteration i of `body` (lines over %i) on pool stream i: every stream
    waits for the caller's first, and the caller for each iteration's."""
    return [
        "  %main = host.get_current_stream : !host.stream",
        "  scf.for %i = %c0 to %cD step %c1 {",
        "    %s = host.stream_from_pool %i : !host.stream",
        "    host.set_current_stream %s",
        "    host.sync_stream %main",
        "  }",
        "  scf.for %i = %c0 to %cD step %c1 {",
        "    %s = host.stream_from_pool %i : !host.stream",
        "    host.set_current_stream %s",
        *body,
        "    host.set_current_stream %main",
        "    host.sync_stream %s",
        "  }",
    ]


def ag_ring(d, cuda):
    name = "ag_ring_cuda" if cuda else "ag_ring"
    team, lines = head(name, d, f"%a: memref<1x{W}xf32>, %out: memref<{d}x{W}xf32>")
    on = " on cuda" if cuda else ""
    if cuda:
        lines.append(
            f"  comm.share_mem_handles %a, %out team [{team}] : memref<1x{W}xf32>, memref<{d}x{W}xf32>"
        )
    lines.append(f"  %mine = host.select %a[0][%c0] : memref<1x{W}xf32> to {SLICE}")
    body = [
        "    %ri = arith.addi %r, %i : index",
        "    %from = arith.remui %ri, %cD : index",
        "    %rd = arith.addi %r, %cD : index",
        "    %rdi = arith.subi %rd, %i : index",
        "    %to = arith.remui %rdi, %cD : index",
        f"    %slot = host.select %out[0][%from] : memref<{d}x{W}xf32> to {SLICE}",
    ]
    if cuda:
        body += [
            f"    %q = comm.recv %slot from %from team [{team}]{on} : {SLICE}",
            f"    %p = comm.send %mine to %to team [{team}]{on} : {SLICE}",
            "    comm.wait %q",
            "    comm.wait %p",
        ]
    else:
        body += [
            "    comm.start_coalescing",
            f"    %p = comm.send %mine to %to team [{team}] : {SLICE}",
            f"    %q = comm.recv %slot from %from team [{team}] : {SLICE}",
            "    %g = comm.end_coalescing",
            "    comm.wait %g",
        ]
    lines += stream_loop(body)
    lines += ["  return", "}"]
    return lines


def rs_ring(d):
    team, lines = head("rs_ring", d, f"%x: memref<{d}x{W}xf32>, %out: memref<{W}xf32>")
    lines += [
        f"  %sum = host.alloc : memref<{W}xf32>",
        f"  %got = host.alloc : memref<{W}xf32>",
        "  %last = arith.subi %cD, %c1 : index",
        "  %r1 = arith.addi %r, %c1 : index",
        "  %next = arith.remui %r1, %cD : index",
        "  %rl = arith.addi %r, %last : index",
        "  %prev = arith.remui %rl, %cD : index",
        "  scf.for %i = %c0 to %cD step %c1 {",
        # At step i rank r adds its part of chunk (r + i + 1) mod D: the chunk
        # travels to r - 1, and is rank r's own at the last step.
        "    %ri = arith.addi %r1, %i : index",
        "    %chunk = arith.remui %ri, %cD : index",
        f"    %part = host.select %x[0][%chunk] : memref<{d}x{W}xf32> to {SLICE}",
        "    %first = arith.cmpi eq, %i, %c0 : index",
        "    scf.if %first {",
        f"      host.copy ins(%part : {SLICE}) outs(%sum : memref<{W}xf32>)",
        "    } else {",
        f"      host.add ins(%got, %part : memref<{W}xf32>, {SLICE}) outs(%sum : memref<{W}xf32>)",
        "    }",
        "    %done = arith.cmpi eq, %i, %last : index",
        "    %to = arith.select %done, %r, %prev : index",
        "    %from = arith.select %done, %r, %next : index",
        f"    %into = arith.select %done, %out, %got : memref<{W}xf32>",
        "    comm.start_coalescing",
        f"    %p = comm.send %sum to %to team [{team}] : memref<{W}xf32>",
        f"    %q = comm.recv %into from %from team [{team}] : memref<{W}xf32>",
        "    %g = comm.end_coalescing",
        "    comm.wait %g",
        "  }",
        f"  host.dealloc %sum : memref<{W}xf32>",
        f"  host.dealloc %got : memref<{W}xf32>",
        "  return",
        "}",
    ]
    return lines


def ag_bcast(d):
    team, lines = head("ag_bcast", d, f"%a: memref<1x{W}xf32>, %out: memref<{d}x{W}xf32>")
    lines.append(f"  %mine = host.select %a[0][%c0] : memref<1x{W}xf32> to {SLICE}")
    lines += stream_loop([
        f"    %slot = host.select %out[0][%i] : memref<{d}x{W}xf32> to {SLICE}",
        f"    %b = comm.broadcast %mine into %slot root %i team [{team}] : {SLICE} into {SLICE}",
        "    comm.wait %b",
    ])
    lines += ["  return", "}"]
    return lines


def rs_reduce(d):
    team, lines = head("rs_reduce", d, f"%x: memref<{d}x{W}xf32>, %out: memref<{W}xf32>")
    lines += stream_loop([
        f"    %part = host.select %x[0][%i] : memref<{d}x{W}xf32> to {SLICE}",
        f"    %q = comm.reduce %part into %out sum root %i team [{team}] : {SLICE} into memref<{W}xf32>",
        "    comm.wait %q",
    ])
    lines += ["  return", "}"]
    return lines


PROGRAMS = {
    "ag-ring": lambda d: ag_ring(d, cuda=False),
    "ag-ring-cuda": lambda d: ag_ring(d, cuda=True),
    "rs-ring": rs_ring,
    "ag-bcast": ag_bcast,
    "rs-reduce": rs_reduce,
}


def check(kind, d, directory):
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("check_npy", os.path.join(here, "check_npy.py"))
    load = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(load)
    inputs = [load.load(os.path.join(directory, f"arg0.rank{r}.npy")) for r in range(d)]
    for r in range(d):
        out = load.load(os.path.join(directory, f"arg1.rank{r}.npy"))
        if kind.startswith("ag"):
            want = [x for rank in inputs for x in rank]
        else:
            want = [sum(inputs[j][r * W + e] for j in range(d)) for e in range(W)]
        bad = [e for e, (x, y) in enumerate(zip(out, want)) if not abs(x - y) <= 1e-5 * max(1.0, abs(y))]
        if len(out) != len(want) or bad:
            sys.exit(f"{kind} on {d} ranks: rank {r}'s output differs at elements {bad[:8]}: "
                     f"{[out[e] for e in bad[:8]]} instead of {[want[e] for e in bad[:8]]}")
    print(f"{kind} on {d} ranks: every rank's output ok")


def main():
    command, kind, d = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if command == "program":
        print(f"// {kind} on {d} ranks, from Inputs/pipelines.py")
        print("\n".join(PROGRAMS[kind](d)))
    else:
        check(kind, d, sys.argv[4])


main()
