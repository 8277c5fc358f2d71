"""Reference-free checks."""
