"""Writes (with its directory) an f32 .npy file of the given shape whose every value is VALUE
(a float, or nan).

usage: fill_npy.py PATH VALUE EXTENT...
"""
import os
import struct
import sys

path, value = sys.argv[1], float(sys.argv[2])
shape = tuple(int(extent) for extent in sys.argv[3:])
count = 1
for extent in shape:
    count *= extent
header = "{'descr': '<f4', 'fortran_order': False, 'shape': %r, }" % (shape,)
header += " " * (63 - (10 + len(header)) % 64) + "\n"
os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
    f.write(struct.pack("<%df" % count, *([value] * count)))
