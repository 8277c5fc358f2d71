"""The trust boundary: everything that starts, confines and hears the sandboxed child (bubblewrap, own uid,
Landlock, seccomp, rlimits, cgroups; the wire and its validation; the bounded notebook conversion).
No module outside this package starts or confines a child (tests/test_architecture.py).

ARCHITECTURE.md: what each module of this room does."""
