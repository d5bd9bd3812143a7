"""What each rank of ``python -m ember.distributed.run`` starts with: torchrun's variables
(RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE) taken from the MPI launcher's (MPICH's
PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS), then the user's script as
``__main__``, so scripts written for torchrun find them."""
import os
import runpy
import sys

_FROM_MPI = {"RANK": "PMI_RANK", "WORLD_SIZE": "PMI_SIZE", "LOCAL_RANK": "MPI_LOCALRANKID",
             "LOCAL_WORLD_SIZE": "MPI_LOCALNRANKS"}


def set_rank_variables(environ):
    """Fill torchrun's variables from MPICH's, where MPICH set them and they are unset.

    >>> env = {"PMI_RANK": "1", "PMI_SIZE": "2"}
    >>> set_rank_variables(env); env["RANK"], env["WORLD_SIZE"], "LOCAL_RANK" in env
    ('1', '2', False)
    """
    for name, source in _FROM_MPI.items():
        if source in environ and name not in environ:
            environ[name] = environ[source]


def main(argv):
    set_rank_variables(os.environ)
    if argv[0] == "-m":
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv
        sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
        runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
