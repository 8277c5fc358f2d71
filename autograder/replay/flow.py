"""Where a training passes an answer on to a later call: found while the reference's run is recorded, followed
when a submission's run is replayed, so that the submission gets its own answers back where its training
would give them (else it could see that an answer changed within the tolerances comes back as the reference's).

    with Provenance(passes_on) as seen:          # recording, around the training
        links = seen.links(args, cotangent)      # before a call: which arguments come from earlier answers
        seen.answered(pieces, mask)              # after it: its answer's tensors (value, then gradients)
    feed = Feed(passes_on, mask_index)           # replaying (mask_index: function -> its mask argument)
    for wave in waves(calls): ...                # replaying: calls whose arguments are all known, asked at once
    args, cotangent = feed.arguments(call)       # the recorded call, with the submission's own answers passed on
    feed.answered(call, value, grads)

While recording, a torch function mode follows which answers' tensors each tensor the training computes
was computed from, and which rows of which tensor `x[rows]` holds (rows: a tensor of indices). An argument
computed from answers is linked to one of those, in this order: the answer's tensor itself (or some of its
rows), the lab's declared transform of it (registry.Replays.passes_on, each keeping the answer's shape:
e.g. the training zeroes padding, or whitens, before passing an answer on), or a copy, each equal bit for
bit (and its rows). Two answers of equal values are told apart by what the argument was computed from, not
by its value. An argument computed from answers that matches none is computed in a way the lab does not
declare: the recording stops with that error, so a replay never passes a recorded value where the training
would pass the submission's own. A cotangent (the gradient the backward pass sends a per-row value:
autograd's own computation, which no mode sees) is linked to the most recent answer's tensor equal to it.
What the training computes from an answer through the model's parameters (the optimiser's steps) is not
followed: a replay stands for a training only when every answer is the reference's within the tolerances.

A link: {"to": argument position or "cotangent", "call": index of the answering call in the run,
"piece": index of the tensor in its answer (values, then gradients), "via": a passes_on name or "",
"rows": an int64 tensor of row indices or None}.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

Transform = Callable[[torch.Tensor, "torch.Tensor | None"], torch.Tensor]


class UndeclaredFlow(Exception):
    """A call's argument is computed from an earlier answer in a way the lab does not declare."""


def pieces(value: Any, grads: Any) -> list[torch.Tensor]:
    """The tensors of an answer, in order: its value (or values), then its gradients."""
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    return [*values, *grads]


def _tensors(tree: Any) -> list[torch.Tensor]:
    if isinstance(tree, torch.Tensor):
        return [tree]
    if isinstance(tree, (list, tuple)):
        return [t for item in tree for t in _tensors(item)]
    if isinstance(tree, dict):
        return [t for item in tree.values() for t in _tensors(item)]
    return []


class Provenance(TorchFunctionMode):
    """What the training computes from the answers of a run being recorded (a torch function mode)."""

    def __init__(self, passes_on: Mapping[str, Transform]):
        super().__init__()
        self.passes_on = passes_on
        self.sources: dict[int, tuple[weakref.ref, frozenset]] = {}  # id -> (tensor, the answers' tensors it is from)
        self.rows_of: dict[int, tuple[weakref.ref, torch.Tensor, torch.Tensor]] = {}  # id of x[rows] -> (it, x, rows)
        self.answers: list[tuple[list[torch.Tensor], torch.Tensor | None]] = []  # per call: its pieces, its mask
        self.paused = False

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if self.paused:
            return out
        found = [s for s in map(self.source_of, _tensors((args, kwargs))) if s]
        if not found:
            return out
        sources = frozenset().union(*found)
        for t in _tensors(out):
            self._mark(self.sources, t, sources)
        name = getattr(func, "__name__", "")
        if (name.endswith("_") or name == "__setitem__") and args and isinstance(args[0], torch.Tensor):
            self._mark(self.sources, args[0], sources | (self.source_of(args[0]) or frozenset()))  # written in place
        if func is torch.Tensor.__getitem__ and isinstance(out, torch.Tensor) and _is_rows(args[1]):
            self._mark(self.rows_of, out, args[0], args[1].detach().clone())
        return out

    def source_of(self, t: torch.Tensor) -> frozenset | None:
        """The answers' tensors, as (call, piece), that `t` was computed from (None: from none)."""
        entry = self.sources.get(id(t))
        return entry[1] if entry is not None and entry[0]() is t else None

    @staticmethod
    def _mark(table: dict, t: torch.Tensor, *facts: Any) -> None:
        key = id(t)

        def forget(_: weakref.ref) -> None:  # when t is freed, before its id can be another tensor's
            table.pop(key, None)
        table[key] = (weakref.ref(t, forget), *facts)

    def answered(self, answer: list[torch.Tensor], mask: torch.Tensor | None) -> None:
        """The call just recorded answered these tensors (values, then gradients); `mask`: its mask argument."""
        j = len(self.answers)
        self.answers.append((answer, mask))
        for p, t in enumerate(answer):
            self._mark(self.sources, t, frozenset([(j, p)]))

    def links(self, args: list, cotangent: torch.Tensor | None) -> list[dict]:
        """The links of a call's arguments (and cotangent) to earlier answers; UndeclaredFlow if one has none."""
        self.paused = True
        try:
            found = []
            for to, arg in [*enumerate(args), ("cotangent", cotangent)]:
                if not isinstance(arg, torch.Tensor):
                    continue
                if self.source_of(arg) is not None:
                    link = self._source(arg)
                    if link is None:
                        raise UndeclaredFlow(f"argument {to} is computed from an earlier answer in a way the lab does "
                                             f"not declare (registry.Replays.passes_on: "
                                             f"{', '.join(self.passes_on) or 'none'})")
                    found.append({"to": to, **link})
                elif to == "cotangent":
                    found += [{"to": to, **link} for link in [self._copied(arg)] if link is not None]
            return found
        finally:
            self.paused = False

    def _source(self, arg: torch.Tensor) -> dict | None:
        """The link of an argument computed from answers: to the answer's tensor it is (or holds rows of), to a
        declared transform of one it is computed from, or to a copy of one."""
        entry = self.rows_of.get(id(arg))
        base, rows = (entry[1], entry[2]) if entry is not None and entry[0]() is arg else (arg, None)
        candidates = sorted(self.source_of(base) or (), reverse=True)  # the most recent first
        for j, p in candidates:
            if self.answers[j][0][p] is base:
                return {"call": j, "piece": p, "via": "", "rows": rows}
        for via, transform in [*self.passes_on.items(), ("", None)]:
            for j, p in candidates:
                piece, mask = self.answers[j][0][p], self.answers[j][1]
                if piece.shape == base.shape and piece.dtype == base.dtype \
                        and torch.equal(piece if transform is None else transform(piece, mask), base):
                    return {"call": j, "piece": p, "via": via, "rows": rows}
        return None

    def _copied(self, cotangent: torch.Tensor) -> dict | None:
        """The most recent answer's tensor equal to a cotangent bit for bit (autograd computed it: no mode sees how)."""
        for j in reversed(range(len(self.answers))):
            for p, piece in enumerate(self.answers[j][0]):
                if piece.shape == cotangent.shape and piece.dtype == cotangent.dtype and torch.equal(piece, cotangent):
                    return {"call": j, "piece": p, "via": "", "rows": None}
        return None


def _is_rows(index: Any) -> bool:
    return isinstance(index, torch.Tensor) and index.dtype == torch.int64 and index.dim() == 1


def waves(calls: Iterable[dict]) -> Iterator[list[dict]]:
    """The recorded calls in order, in the longest runs whose links point only at calls before the run: the calls of
    a run can all be asked at once, since none takes an answer of another (a PPO step's minibatches, say)."""
    wave: list[dict] = []
    start = 0
    for i, call in enumerate(calls):
        if wave and any(link["call"] >= start for link in call["flow"]):
            yield wave
            wave, start = [], i
        wave.append(call)
    if wave:
        yield wave


class Feed:
    """A replay's arguments: each recorded call's, with the submission's own answers where the links say."""

    def __init__(self, passes_on: Mapping[str, Transform], mask_index: Callable[[str], int | None]):
        self.passes_on, self.mask_index = passes_on, mask_index
        self.own: list[tuple[list[torch.Tensor], torch.Tensor | None]] = []  # per call answered: pieces, mask
        self.made: dict[tuple[int, int, str], torch.Tensor] = {}  # transforms of the latest answer linked

    def arguments(self, call: dict) -> tuple[list, torch.Tensor | None]:
        args, cotangent = list(call["args"]), call["cotangent"]
        for link in call["flow"]:
            answer, mask = self.own[link["call"]]
            x = answer[link["piece"]]
            if link["via"]:
                made = (link["call"], link["piece"], link["via"])
                if made not in self.made:  # made once for the minibatches that get rows of it
                    self.made = {k: v for k, v in self.made.items() if k[0] == made[0]}
                    self.made[made] = self.passes_on[link["via"]](x, mask)
                x = self.made[made]
            if link["rows"] is not None:
                x = x[link["rows"]]
            if link["to"] == "cotangent":
                cotangent = x
            else:
                args[link["to"]] = x
        return args, cotangent

    def answered(self, call: dict, value: Any, grads: Any) -> None:
        where = self.mask_index(call["fn"])
        self.own.append((pieces(value, grads), call["args"][where] if where is not None else None))
