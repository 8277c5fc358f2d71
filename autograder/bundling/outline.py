"""The lab's parts as the handout and the notebook show them, read from the reference with ast.

The handout uses only the interface: the module docstring, the `# ==== Part NAME: title` section
comments, and each function's signature and docstring. Only the nbgrader source notebook (instructors'
side) takes each whole definition, solution markers included, for its solution cells.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

SECTION = re.compile(r"^# =+ Part (\w+): (.+)$")


@dataclass
class Function:
    name: str
    signature: str      # the `def ...:` lines as written in the reference
    docstring: str      # cleaned (ast.get_docstring)
    source: str         # the whole definition, markers and trailing comments included (notebook cells)


@dataclass
class Part:
    name: str
    title: str
    functions: list[Function] = field(default_factory=list)


@dataclass
class Outline:
    docstring: str
    preamble: str       # the code between the module docstring and the first part (imports)
    parts: list[Part]

    @property
    def intro(self) -> str:
        """The docstring without its title line and without the paragraphs naming commands (`python ...`):
        what to implement and the shapes, once; each edition (handout, notebook) says how to run things."""
        paragraphs = self.docstring.split("\n\n")[1:]
        return "\n\n".join(p for p in paragraphs if "`python " not in p).strip()


def read_outline(source: str) -> Outline:
    """Parse the reference: every top-level function belongs to the last section comment above it."""
    tree = ast.parse(source)
    lines = source.splitlines()
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    sections = [(number, m.group(1), m.group(2).strip()) for number, line in enumerate(lines, start=1)
                if (m := SECTION.match(line))]
    if not sections:
        raise ValueError("the reference has no `# ==== Part NAME: title` section comments")
    parts = [Part(name, title) for _, name, title in sections]
    for node in functions:
        index = max((i for i, (number, _, _) in enumerate(sections) if number < node.lineno), default=None)
        if index is None:
            raise ValueError(f"{node.name} comes before the first part's section comment")
        docstring = ast.get_docstring(node)
        if not docstring:
            raise ValueError(f"{node.name} has no docstring: the handout teaches from it")
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        signature = "\n".join(lines[first - 1:node.body[0].lineno - 1])
        last = node.end_lineno or node.lineno
        while last < len(lines) and lines[last].startswith((" ", "\t")) and lines[last].strip().startswith("#"):
            last += 1  # indented comments after the last statement (the `### END SOLUTION` marker)
        body = "\n".join(lines[first - 1:last])
        parts[index].functions.append(Function(node.name, signature, docstring, body))
    doc_end = tree.body[0].end_lineno if ast.get_docstring(tree) else 0
    preamble = "\n".join(lines[doc_end:sections[0][0] - 1]).strip("\n")
    return Outline(ast.get_docstring(tree) or "", preamble, parts)
