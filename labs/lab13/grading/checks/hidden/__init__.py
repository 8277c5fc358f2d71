"""Checks against the reference over the declared domain, and properties (never shipped)."""
