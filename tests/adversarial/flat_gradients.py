# Tamper with the worker: every gradient it sends back is flattened (same element count, wrong shape).
import sys as _sys

_worker = _sys.modules["__main__"]
_call = _worker.call


def _flattening_call(module, request):
    reply = _call(module, request)
    reply["grads"] = [g.reshape(-1) if g is not None else None for g in reply.get("grads", [])]
    return reply


_worker.call = _flattening_call
