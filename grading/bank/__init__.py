"""The lab's bank of known mistakes and correct variants (autograder/bank.py: @mistake, @variant)."""
