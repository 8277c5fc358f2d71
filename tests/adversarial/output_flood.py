# Print without end inside compute_gae: a hang like any other (printing itself never stops the child).
import sys as _sys


def compute_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    line = "spam " * 200 + "\n"
    while True:
        _sys.stdout.write(line)
