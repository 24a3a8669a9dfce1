"""The Python package the Snakemake rules run (see README and shared DESIGN.md)."""
import os as _os
import platform as _platform

# One BLAS/OpenMP thread per job, set before numpy/torch load: Snakemake runs jobs side by side on the
# 2 cores, and a single thread keeps results bit-for-bit repeatable (measured in shared/STACK.md).
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    _os.environ.setdefault(_var, "1")

# The same float kernels on every x86-64 machine with AVX2 (all since 2013), set before numpy/torch load: OpenBLAS
# (numpy, scipy, cvxpy) and torch otherwise pick kernels by CPU at run time, and their AVX-512 kernels round
# differently. Measured on one AVX-512 machine: OpenBLAS's SkylakeX kernels (an Intel CPU's choice) change
# fairness_pareto's frontiers, torch's AVX-512 kernels change scsd's runs; pinned, two machines agree.
if _platform.machine() in ("x86_64", "AMD64"):
    for _var, _value in (("OPENBLAS_CORETYPE", "Haswell"), ("ATEN_CPU_CAPABILITY", "avx2"), ("MKL_CBWR", "AVX2")):
        _os.environ.setdefault(_var, _value)
