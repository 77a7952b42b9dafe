"""Small numba primitives shared by the kernels of several rooms (hashing, ...)."""
