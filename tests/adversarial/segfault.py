# Crash the interpreter inside compute_gae.
import ctypes as _ctypes


def compute_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    _ctypes.string_at(0)
