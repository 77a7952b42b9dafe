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
import os
import sys

_BLOCKED = "scipy"


class _WithoutScipy(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname == _BLOCKED or fullname.startswith(_BLOCKED + "."):
            raise ModuleNotFoundError(f"No module named {fullname!r} (kept out of the "
                                      "corpus-miner command line)", name=fullname)
        return None


def lean_process() -> None:
    """Call first thing in a command-line process (before numpy or numba are imported)."""
    # only OpenBLAS's: OMP_NUM_THREADS would also size Arrow's and numba's thread pools
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if _BLOCKED not in sys.modules and not any(isinstance(f, _WithoutScipy)
                                               for f in sys.meta_path):
        sys.meta_path.insert(0, _WithoutScipy())
