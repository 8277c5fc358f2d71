"""`python -m autograder release`: the student bundle, the Gradescope autograder and the nbgrader course.

Like nbgrader, a release is a pipeline of small single-purpose steps ("preprocessors"), each in its
own module, applied to an in-memory `Tree` (bundle path -> bytes) and driven by the recipes in the
repository's `release/` folder (which files go where, the handout and script templates):

    tree.py            the in-memory file tree every step adds to
    collect.py         copy the files a recipe lists into the tree
    starter.py         the starter, generated from the reference (solution bodies removed)
    engine.py          the grading engine for the self-check: the modules it imports, minus hidden ones
    public_config.py   grading.yaml without its secrets (only what the self-check needs)
    outline.py         the lab's parts read from the reference with ast (signatures and docstrings only)
    handout.py         README.md rendered with jinja2 from the lab's parts and grading.yaml
    scripts.py         Gradescope's setup.sh and run_autograder from their templates
    source_notebook.py the nbgrader source notebook (solution, autograded test and read-only cells)
    guard.py           refuse a student tree holding solution lines, hidden checks or secrets
    deterministic_zip.py  a tree as a byte-reproducible zip
    output.py          write into --out only what a release owns (refuses other files unless --force)
    pipeline.py        the three outputs, each a short list of the steps above
"""
