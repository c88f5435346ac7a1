"""check_trace.py TRACE RANKS [cpu|cuda]: a Chrome/Perfetto trace of hir-run is
valid JSON with one process per rank, named tracks (host, streams, and on the
cpu backend comm queues; cuda posts communication on the streams), and
complete slices for the allgathers and matmuls of every rank. Prints how many
(allgather, matmul) pairs of one rank overlap in time on different tracks:
the overlap the stream pipeline exists for (reported, not required, since
thread scheduling on the CI machine decides it)."""
import json
import sys

path, ranks = sys.argv[1], int(sys.argv[2])
backend = sys.argv[3] if len(sys.argv) > 3 else "cpu"
events = json.load(open(path))["traceEvents"]
processes = {e["pid"]: e["args"]["name"] for e in events
             if e.get("ph") == "M" and e["name"] == "process_name"}
assert sorted(processes.values()) == sorted(f"rank {r}" for r in range(ranks)), processes
tracks = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
          if e.get("ph") == "M" and e["name"] == "thread_name"}
names = set(tracks.values())
assert "host" in names and any(n.startswith("stream") for n in names), names
assert backend == "cuda" or any(n.startswith("comm") for n in names), names
slices = [e for e in events if e.get("ph") == "X"]
for e in slices:
    assert (e["pid"], e["tid"]) in tracks and e["dur"] >= 0, e
overlaps = 0
for rank in range(ranks):
    mine = [e for e in slices if e["pid"] == rank and tracks[(rank, e["tid"])] != "host"]
    gathers = [e for e in mine if e["name"].startswith("allgather")]
    matmuls = [e for e in mine if e["name"].startswith("matmul")]
    assert gathers and matmuls, f"rank {rank} has no allgather or matmul slice"
    for g in gathers:
        for m in matmuls:
            if g["tid"] != m["tid"] and g["ts"] < m["ts"] + m["dur"] and m["ts"] < g["ts"] + g["dur"]:
                overlaps += 1
print(f"trace ok: {ranks} ranks, {len(tracks)} tracks, {len(slices)} slices, "
      f"{overlaps} allgather/matmul overlaps")
