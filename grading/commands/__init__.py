"""The lab's own commands: each module defines HELP, EXAMPLES, add_arguments and main (as autograder/commands/)."""
