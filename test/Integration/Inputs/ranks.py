"""Starts the ranks of a multi-process run by hand, as torchrun would.

usage: ranks.py [--vars torchrun|slurm|ompi] [--ranks R,R,...] WORLD_SIZE CMD [CMD ...]

Rank r runs CMD number r (the last one when there are fewer), a shell-quoted
command line, with RANK, WORLD_SIZE, LOCAL_RANK (or, with --vars, Slurm's
SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID or Open MPI's
OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK instead), MASTER_ADDR and
MASTER_PORT (a free port of localhost) set. Prints every line the ranks write (stdout and
stderr) as `[rank R] line`, then `rank R: exit CODE` for each, and exits 0:
the test checks the output. A rank still running after 60 s is killed.
With --ranks, process i gets rank R_i instead of i (one process each), so
that two processes may be given the same rank, as a user's mistake would.
"""
import os
import shlex
import socket
import subprocess
import sys
import threading
import time


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


#: Each launcher's names for the rank, the world size and the local rank.
VARS = {
    "torchrun": ("RANK", "WORLD_SIZE", "LOCAL_RANK"),
    "slurm": ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"),
    "ompi": ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"),
}


def main():
    arguments = sys.argv[1:]
    launcher = "torchrun"
    if arguments[0] == "--vars":
        launcher, arguments = arguments[1], arguments[2:]
    given = None
    if arguments[0] == "--ranks":
        given, arguments = [int(r) for r in arguments[1].split(",")], arguments[2:]
    world = int(arguments[0])
    commands = arguments[1:]
    names = VARS[launcher]
    port = free_port()
    lock = threading.Lock()
    processes = []
    readers = []
    for rank in range(world) if given is None else range(len(given)):
        env = dict(os.environ)
        env.pop("HIR_AGENT_STORE", None)
        env.pop("HIR_STORE_PORT", None)
        for name in (name for names in VARS.values() for name in names):
            env.pop(name, None)
        as_rank = rank if given is None else given[rank]
        env.update(zip(names, (str(as_rank), str(world), str(as_rank))))
        env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        command = shlex.split(commands[min(rank, len(commands) - 1)])
        process = subprocess.Popen(
            command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        processes.append(process)

        def read(process=process, rank=rank):
            for line in process.stdout:
                with lock:
                    print(f"[rank {rank}] {line.decode(errors='replace').rstrip()}", flush=True)

        reader = threading.Thread(target=read)
        reader.start()
        readers.append(reader)
    deadline = time.time() + 60
    codes = []
    for rank, process in enumerate(processes):
        try:
            codes.append(process.wait(timeout=max(0, deadline - time.time())))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            codes.append("killed after 60 s")
    for reader in readers:
        reader.join()
    for rank, code in enumerate(codes):
        print(f"rank {rank}: exit {code}")


main()
