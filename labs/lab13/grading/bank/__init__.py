"""Lab 13's bank of known mistakes and correct variants (trusted, never shipped to students).

Each module `bank/<part>.py` registers one part's entries with the engine's `@mistake` / `@variant`
(autograder/lab/bank.py); `source` cites the public code or paper where the mistake was found (sources.py), "" for
ours. Bodies use `torch`, `F` (torch.nn.functional, as posttrain.py imports them) and their own module's private
helpers (`_name` functions), which a bank submission's source carries along (autograder.lab.bank.submission_source).
"""
