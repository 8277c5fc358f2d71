"""The same arithmetic on every machine: the kernels torch, MKL and oneDNN may use, in the judge and every child.

torch picks its vector kernels by the CPU's widest instruction set (AVX-512 on some servers, AVX2 on others);
MKL and oneDNN pick theirs by instruction set and vendor. Each rounds the last bits its own way, and a training
amplifies them: a bank mistake's three PPO runs reached a gold gain of 0.189 with AVX-512 kernels, 0.094 with
AVX2's and 0.150 with MKL's AVX2 branch alone, and its grade was 68 on an AMD VM and 73 on an Intel one
(docs/validity.md, "The same arithmetic on every machine"). KERNELS pins all three to their AVX2 code paths,
which every x86-64 server CPU since 2015 has: MKL's conditional numerical reproducibility branch (MKL_CBWR), and
the widest instruction set torch's dispatcher and oneDNN may use. With them, a seeded training gives the same
bits whatever the CPU offers beyond AVX2 (tests/test_arithmetic.py).

    pin()        sets KERNELS in this process's environment (autograder/__init__.py: before torch is used)
    CHILD_ENV    KERNELS and one thread: the environment every sandboxed child (and the zygote) starts with
    torch_setup()  torch's version and its kernels, for the fingerprints of computed data files
    unpinned()   None, or the sentence staff read when this process's torch chose other kernels (the grade goes on)
"""

from __future__ import annotations

import os
import platform

KERNELS = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"}
CHILD_ENV = {**KERNELS, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def pin() -> None:
    """Set KERNELS in this process's environment: read by torch at its first operation, by MKL and oneDNN at
    their first call, and inherited by every process this one starts."""
    os.environ.update(KERNELS)


def torch_setup() -> str:
    """torch's version and the kernels it is pinned to: what a computation's bits depend on besides its code."""
    import torch

    return f"torch {torch.__version__} {KERNELS!r}"


def unpinned() -> str | None:
    """None when torch in this process runs the pinned kernels; else why not, in one sentence."""
    import torch

    chosen = torch.backends.cpu.get_cpu_capability()
    if chosen == "AVX2":
        return None
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return (f"this {platform.machine()} CPU has no AVX2 kernels, so trained end-to-end tests may round "
                f"differently here than on x86-64 graders")
    return (f"torch chose its {chosen} kernels before the grader could pin them to AVX2 (import autograder before "
            f"torch, or set {' '.join(f'{k}={v}' for k, v in KERNELS.items())}), so trained end-to-end tests may "
            f"round differently here than on other graders")
