# SPDX-License-Identifier: GPL-2.0-or-later
"""lwm2-kids.py MODE FILE: four children of Python's, each writing 1 MiB of
zeros to FILE.N, the way many jobs start them; run by the image's python3
in t-containers.sh and t-pyxis.sh, where lwm2 must measure every child.

  pool-fork, pool-spawn, pool-forkserver  a multiprocessing Pool of 4
      workers of that start method (spawn and forkserver exec a new
      python3 that closes what it did not mean to pass on, and start a
      resource tracker; forkserver also its server), each task 1 MiB;
  subprocess  a loop of subprocess.run(["dd", ...]), which closes the
      descriptors it does not pass before the exec.

The program runs in a child of a subreaper that waits for every
descendant: the helpers that outlive the program (the tracker and the
server end when its end closes their pipes) end within the run, not under
the step's end, which kills what is left of it.  So a run is one more
python3 process.  tempfile's default directory is named, as its probe of
one is a 4-byte file write of the program's own (the forkserver's socket
goes there).  Prints one line when all four wrote; exit status 0, else 1."""
import ctypes
import multiprocessing
import os
import subprocess
import sys
import tempfile

KIDS = 4
MIB = 1048576


def write(path):
    with open(path, "wb") as f:
        f.write(bytes(MIB))
    return MIB


def reaped(run, *args):
    """run(*args) in a child; its exit status once every descendant ended."""
    PR_SET_CHILD_SUBREAPER = 36
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        return run(*args)
    pid = os.fork()
    if pid == 0:
        sys.exit(run(*args))
    status = 1
    while True:
        try:
            done, st = os.wait()
        except ChildProcessError:
            return status
        if done == pid:
            status = os.waitstatus_to_exitcode(st)


def main():
    if len(sys.argv) != 3:
        print("usage: lwm2-kids.py MODE FILE", file=sys.stderr)
        return 2
    return reaped(kids, sys.argv[1], sys.argv[2])


def kids(mode, file):
    tempfile.tempdir = os.environ.get("TMPDIR") or "/tmp"
    paths = ["%s.%d" % (file, k) for k in range(KIDS)]
    if mode.startswith("pool-"):
        pool = multiprocessing.get_context(mode[5:]).Pool(KIDS)
        written = pool.map(write, paths, chunksize=1)
        pool.close()
        pool.join()
    elif mode == "subprocess":
        written = []
        for p in paths:
            subprocess.run(["dd", "if=/dev/zero", "of=" + p, "bs=65536", "count=16",
                            "status=none"], check=True)
            written.append(MIB)
    else:
        print("lwm2-kids.py: no mode %s" % mode, file=sys.stderr)
        return 2
    if written != [MIB] * KIDS:
        return 1
    print("lwm2-kids.py %s: %d children wrote %d bytes each" % (mode, KIDS, MIB))
    return 0


if __name__ == "__main__":
    sys.exit(main())
