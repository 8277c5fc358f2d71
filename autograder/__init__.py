"""A grading engine for labs on numerical ML code: grades submissions in a sandbox against a trusted reference.

It knows no lab: a lab is a folder (docs/labs.md), found from `--lab DIR` (default: the repository's root)."""

__version__ = "0.1.0"
