"""Checks a Python expression over the .npy files hir-run wrote.

usage: check_npy.py DIR EXPR

Every DIR/NAME.npy (f32, f16 or bf16-as-f32, C order) is bound to NAME with
dots turned into underscores (arg0.rank1.npy -> arg0_rank1), as a flat list
of floats; EXPR must be true. No NumPy needed.
"""
import ast
import os
import struct
import sys


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:6] == b"\x93NUMPY", path
    major = data[6]
    header_len_size = 2 if major == 1 else 4
    header_len = int.from_bytes(data[8 : 8 + header_len_size], "little")
    start = 8 + header_len_size
    header = ast.literal_eval(data[start : start + header_len].decode("latin1"))
    code = {"<f4": "f", "<f2": "e", "<f8": "d"}[header["descr"]]
    count = 1
    for extent in header["shape"]:
        count *= extent
    body = data[start + header_len :]
    return list(struct.unpack("<%d%s" % (count, code), body[: count * struct.calcsize(code)]))


def main():
    directory, expression = sys.argv[1], sys.argv[2]
    names = {}
    for entry in sorted(os.listdir(directory)):
        if entry.endswith(".npy"):
            names[entry[:-4].replace(".", "_")] = load(os.path.join(directory, entry))
    names["close"] = lambda xs, ys, tol=1e-6: len(xs) == len(ys) and all(
        abs(x - y) <= tol * max(1.0, abs(y)) for x, y in zip(xs, ys)
    )
    if not eval(expression, names):
        sys.exit("check failed: " + expression)


if __name__ == "__main__":
    main()
