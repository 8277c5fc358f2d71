"""Reference-free checks on hand-computed values (shipped with the self-check)."""
