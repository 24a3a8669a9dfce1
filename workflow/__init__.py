"""The Python package the Snakemake rules run (see README and shared DESIGN.md)."""
import os as _os

# One BLAS/OpenMP thread per job, set before numpy/torch load: Snakemake runs jobs side by side on the
# 2 cores, and a single thread keeps results bit-for-bit repeatable (measured in shared/STACK.md).
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    _os.environ.setdefault(_var, "1")
