"""The toy lab's checks."""
