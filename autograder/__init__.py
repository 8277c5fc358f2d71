"""Lab 12 autograder: grades RLHF submissions in a sandbox against a trusted reference."""

__version__ = "0.1.0"
