"""Mutants of a lab's reference, made by mutmut's own operators on its solution regions only.

mutmut (https://github.com/boxed/mutmut) walks a module with libcst and offers, for each node, the
mutated nodes its operators make (`+` -> `-`, `<` -> `<=`, a number n -> n + 1, a string -> "XX..XX",
an argument dropped or replaced by None, `x = e` -> `x = None`, True <-> False...). We use its visitor,
its operator list and its one-node replacement as they are (mutmut.mutation.file_mutation and
.mutators), without its trampolines and test runner: each mutant is the whole reference source with one
node replaced, graded in-process by autograder/validity/mutation.py.

    mutants = generate(source, ("f", "g"))   # every mutant inside the functions' solution regions
    mutants[0].id, .function, .line, .before, .after, .diff(source)
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from importlib.metadata import version

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider
from mutmut.mutation.file_mutation import MutationVisitor, deep_replace
from mutmut.mutation.mutators import mutation_operators
from mutmut.mutation.pragma_handling import IgnoredCode

from autograder.lab.starter import BEGIN, END

_DEF = re.compile(r"^\s*def (\w+)\(")


def library() -> str:
    """The mutation library and its version, as reports name it."""
    return f"mutmut {version('mutmut')}"


@dataclass(frozen=True)
class Mutant:
    id: str        # "f#3": the 3rd mutant of contract function f's solution region
    function: str  # the contract function whose solution region holds the mutated node
    line: int      # the mutated node's first line in the reference
    before: str    # the node's text in the reference
    after: str     # the node's text in the mutant
    source: str    # the whole mutated module

    def diff(self, reference: str) -> str:
        """A unified diff of the reference against this mutant (the changed lines only, no context)."""
        lines = difflib.unified_diff(reference.splitlines(), self.source.splitlines(), "reference", self.id,
                                     n=0, lineterm="")
        return "\n".join(line for line in lines if not line.startswith("@@"))


def solution_lines(source: str) -> dict[str, range]:
    """function name -> the lines strictly between its BEGIN and END SOLUTION markers (1-based)."""
    regions: dict[str, range] = {}
    function, begin = None, 0
    for number, line in enumerate(source.splitlines(), start=1):
        if (match := _DEF.match(line)) is not None:
            function = match.group(1)
        if line.strip() == BEGIN:
            begin = number
        elif line.strip() == END and function is not None:
            regions[function] = range(begin + 1, number)
    return regions


def generate(source: str, functions: tuple[str, ...]) -> list[Mutant]:
    """Every mutant mutmut's operators make of a node inside the solution region of one of `functions`, in
    source order (mutmut's own order: a pre-order walk of the module)."""
    regions = {fn: lines for fn, lines in solution_lines(source).items() if fn in functions}
    wrapper = MetadataWrapper(cst.parse_module(source))
    visitor = MutationVisitor(mutation_operators, IgnoredCode(set(), set(), set()))
    module = wrapper.visit(visitor)
    positions = wrapper.resolve(PositionProvider)
    mutants: list[Mutant] = []
    counts: dict[str, int] = {}
    for mutation in visitor.mutations:
        outer = mutation.contained_by_top_level_function
        function = outer.name.value if isinstance(outer, cst.FunctionDef) else ""
        line = positions[mutation.original_node].start.line
        if function not in regions or line not in regions[function]:
            continue
        counts[function] = counts.get(function, 0) + 1
        mutated = deep_replace(module, mutation.original_node, mutation.mutated_node)
        assert isinstance(mutated, cst.Module)
        mutants.append(Mutant(f"{function}#{counts[function]}", function, line,
                              _one_line(module.code_for_node(mutation.original_node)),
                              _one_line(module.code_for_node(mutation.mutated_node)), mutated.code))
    return mutants


def _one_line(code: str) -> str:
    return " ".join(code.split())
