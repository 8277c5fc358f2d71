"""The toy lab's grader side (loaded by the engine as the package `toylab`)."""
