"""``python -m ember.distributed.run -n 4 script.py args...``: start a job of 4 ranks.

It replaces itself with the MPI launcher (``mpiexec -n 4 python script.py args...``): the
one the mpich wheel installed, else the first ``mpiexec`` on PATH. Each rank gets
torchrun's variables RANK, WORLD_SIZE, LOCAL_RANK and LOCAL_WORLD_SIZE before the script
runs. ``--hostfile FILE``
spreads the ranks over the machines FILE lists (run the same command on one of them).
"""
import argparse
import importlib.metadata
import os
import shutil
import sys
import sysconfig

__all__ = ["find_mpiexec", "launch_command", "main"]


def find_mpiexec():
    """The path of ``mpiexec``: the mpich wheel's, the one beside this Python, or PATH's.

    >>> os.path.basename(find_mpiexec() or "mpiexec")
    'mpiexec'
    """
    try:
        for f in importlib.metadata.files("mpich") or ():
            if f.name == "mpiexec":
                return str(f.locate())
    except importlib.metadata.PackageNotFoundError:
        pass
    for folder in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        candidate = os.path.join(folder, "mpiexec")
        if os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("mpiexec")


def _parser():
    p = argparse.ArgumentParser(
        prog="python -m ember.distributed.run",
        description="Run a training script on several processes with mpiexec.")
    p.add_argument("-n", "--nproc-per-node", "--nproc_per_node", dest="nprocs", type=int,
                   default=1, help="number of processes (ranks) in the job")
    p.add_argument("--hostfile", default=None,
                   help="file naming the machines to run on (mpiexec's host file)")
    p.add_argument("-m", "--module", action="store_true",
                   help="run the script as a module (python -m)")
    p.add_argument("script", help="the training script (or module with -m)")
    p.add_argument("script_args", nargs=argparse.REMAINDER)
    return p


def launch_command(argv, mpiexec):
    """The mpiexec command line for ``argv`` (this launcher's arguments).

    >>> launch_command(["-n", "2", "train.py", "--lr", "0.1"], "mpiexec")[:3]
    ['mpiexec', '-n', '2']
    """
    args = _parser().parse_args(argv)
    if args.nprocs < 1:
        raise SystemExit(f"ember.distributed.run: -n must be at least 1, got {args.nprocs}")
    cmd = [mpiexec, "-n", str(args.nprocs)]
    if args.hostfile is not None:
        cmd += ["-f", args.hostfile]
    # each rank starts in _launched, which sets torchrun's RANK, LOCAL_RANK, ... variables
    cmd += [sys.executable, "-m", "ember.distributed._launched"]
    cmd += (["-m"] if args.module else []) + [args.script]
    return cmd + args.script_args


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    mpiexec = find_mpiexec()
    if mpiexec is None:
        raise SystemExit("ember.distributed.run: no mpiexec found; pip install "
                         "'ember[distributed]' (mpi4py and the mpich wheel)")
    cmd = launch_command(argv, mpiexec)
    os.execv(cmd[0], cmd)


if __name__ == "__main__":
    main()
