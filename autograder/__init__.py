"""A grading engine for labs on numerical ML code: grades submissions in a sandbox against a trusted reference.

It knows no lab: a lab is a folder (docs/labs.md), found from `--lab DIR` (default: the repository's root)."""

from autograder.lab import arithmetic

__version__ = "0.1.0"

arithmetic.pin()  # before any torch operation in this process: the same kernels on every machine
