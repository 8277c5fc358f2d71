"""Checks against the reference."""
