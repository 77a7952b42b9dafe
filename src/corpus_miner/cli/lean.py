"""The command-line process loads no linear algebra it does not use.

numba imports scipy when it is installed, and scipy.linalg's BLAS (OpenBLAS) starts a thread
per core when it loads. Under an address-space limit (`ulimit -v`) those threads fail to get
their stacks and OpenBLAS's start-up spins holding the GIL: the command hangs and ignores
SIGTERM. No command needs BLAS inside numba kernels, so the CLI keeps scipy out of the process
(numba treats it as absent) and asks numpy's own OpenBLAS for one thread. A Python program
that imports corpus-miner is left as it is.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys

_BLOCKED = "scipy"


class _Refused(importlib.abc.Loader):
    def create_module(self, spec):
        raise ModuleNotFoundError(f"No module named {spec.name!r} (kept out of the corpus-miner "
                                  "command line)", name=spec.name)

    def exec_module(self, module) -> None:  # never reached: create_module refuses
        raise ModuleNotFoundError(module.__name__)


class _WithoutScipy(importlib.abc.MetaPathFinder):
    """`import scipy` fails like a missing package. A spec is still given, so that code asking
    importlib.util.find_spec whether scipy exists (pyspark does) gets an answer, not an error."""

    def find_spec(self, fullname, path, target=None):
        if fullname == _BLOCKED or fullname.startswith(_BLOCKED + "."):
            return importlib.machinery.ModuleSpec(fullname, _Refused())
        return None


def lean_process() -> None:
    """Call first thing in a command-line process (before numpy or numba are imported)."""
    # only OpenBLAS's: OMP_NUM_THREADS would also size Arrow's and numba's thread pools
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if _BLOCKED not in sys.modules and not any(isinstance(f, _WithoutScipy)
                                               for f in sys.meta_path):
        sys.meta_path.insert(0, _WithoutScipy())
