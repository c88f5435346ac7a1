"""Runs a command with a deadline, for tests of how soon something ends.

usage: within.py SECONDS CMD [ARG ...]

Prints what CMD writes (stderr into stdout), then `exit CODE` (`signal N`
when a signal ended it), or `still running after SECONDS s` once the
deadline passes, when it kills CMD; exits 0: the test checks the output.
"""
import subprocess
import sys


def main():
    seconds, command = float(sys.argv[1]), sys.argv[2:]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        output, _ = child.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        child.kill()
        output, _ = child.communicate()
        sys.stdout.write(output.decode(errors="replace"))
        print(f"still running after {sys.argv[1]} s")
        return
    sys.stdout.write(output.decode(errors="replace"))
    code = child.returncode
    print(f"signal {-code}" if code < 0 else f"exit {code}")


if __name__ == "__main__":
    main()
