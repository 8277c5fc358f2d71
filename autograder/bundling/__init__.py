"""`python -m autograder release`: the student bundle, the Gradescope autograder and the nbgrader course.

Like nbgrader, a release is a pipeline of small single-purpose steps ("preprocessors"), each in its
own module, applied to an in-memory `Tree` (bundle path -> bytes). What goes where is the engine's part,
declared here for every lab, and the lab's, its `release/recipes.yaml` (with its own handout, if any):

    recipes.py         the engine's part of each output, and the lab's recipe, read and checked
    assets/            the engine's files: self_check.py, requirements.txt, Gradescope's and nbgrader's templates,
                       the handout a lab may use or extend
    tree.py            the in-memory file tree every step adds to
    collect.py         copy files of the lab folder (or the engine) into the tree
    starter.py         the starter, generated from the reference (solution bodies removed)
    engine.py          the engine's code: for the self-check, the modules it imports (minus hidden ones); for
                       Gradescope, the whole package but this one
    public_config.py   grading.yaml without its secrets (only what the self-check needs)
    outline.py         the lab's parts read from the reference with ast (signatures and docstrings only)
    declarations.py    what the lab's @check and @e2e_test decorators declare, read with ast (titles, descriptions)
    handout.py         README.md rendered with jinja2 from the lab's parts, grading.yaml and the declarations
    scripts.py         Gradescope's setup.sh and run_autograder from their templates
    source_notebook.py the nbgrader source notebook (solution, autograded test and read-only cells)
    guard.py           refuse a student tree holding solution lines, hidden checks or secrets
    deterministic_zip.py  a tree as a byte-reproducible zip
    output.py          write into --out only what a release owns (refuses other files unless --force)
    pipeline.py        the three outputs, each a short list of the steps above
"""
