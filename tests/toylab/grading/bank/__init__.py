"""Known mistakes and correct variants."""
