"""What hir-run-cache.mlir does to a compile cache directory (lit's PATH has
no coreutils).

usage: cache_dir.py clean DIR        removes DIR and what is in it
       cache_dir.py list DIR         prints the name of every file in DIR,
                                     hidden ones too, one a line, sorted
       cache_dir.py truncate DIR N   cuts every entry (*.hirobj) to N bytes
"""
import os
import shutil
import sys


def main(command, directory, *rest):
    if command == "clean":
        shutil.rmtree(directory, ignore_errors=True)
    elif command == "list":
        for name in sorted(os.listdir(directory)):
            print(name)
    elif command == "truncate":
        (size,) = rest
        for name in os.listdir(directory):
            if name.endswith(".hirobj"):
                os.truncate(os.path.join(directory, name), int(size))
    else:
        sys.exit(f"cache_dir.py: unknown command {command}")


if __name__ == "__main__":
    main(*sys.argv[1:])
