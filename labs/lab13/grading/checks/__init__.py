"""Lab 13's checks: checks/hidden (against the reference over the domain, and properties), registered with the
engine's @check. Its public checks (hand-computed values, shipped with the self-check) are grading.yaml's worked
examples (`contract.F.examples`), from which the engine derives PART.known_values."""
