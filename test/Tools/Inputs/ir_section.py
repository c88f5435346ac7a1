"""Reads what `hir-run --print-ir` printed (stdin) and takes the IR it
printed after one lowering stage: the lines after `// ----- IR after STAGE`
up to the next `// -----` header. With a file, compares that IR with the
file's text and prints their unified diff if they differ; else prints the
IR. Exits 1 if the stage was not printed or the texts differ.

usage: ir_section.py STAGE [EXPECTED]"""
import difflib
import sys

stage = sys.argv[1]
lines = []
inside = found = False
for line in sys.stdin:
    if line.startswith("// ----- "):
        inside = line.strip() == f"// ----- IR after {stage}"
        found = found or inside
        continue
    if inside:
        lines.append(line)
if not found:
    sys.exit(f"no IR was printed after {stage}")
if len(sys.argv) < 3:
    sys.stdout.write("".join(lines))
    sys.exit(0)
with open(sys.argv[2]) as file:
    expected = file.readlines()
diff = list(difflib.unified_diff(expected, lines, sys.argv[2], f"after {stage}"))
sys.stdout.write("".join(diff))
sys.exit(1 if diff else 0)
