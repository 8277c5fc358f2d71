"""Lab 13's checks: checks/public (reference-free, hand-computed values, shipped with the self-check) and
checks/hidden (against the reference over the declared domain, and properties), registered with the engine's @check."""
