# Purity: like first_sight_wrong, but the answer to an input asked twice in a row repeats the first one, so a
# re-ask right after the call sees no difference; right from the third sight on. It passes only if some test
# keeps an answer given to an input already answered wrong (a property check's shipped example failing,
# then the live hypothesis run meeting that input again): autograder/checks/examples.py must keep that failure.
_reference_compute_gae = compute_gae  # noqa: F821 - the reference's, defined above this snippet
_sights = {}


def compute_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    key = (rewards.numpy().tobytes(), values.numpy().tobytes(), mask.numpy().tobytes(), gamma, lam)
    _sights[key] = _sights.get(key, 0) + 1
    advantages, returns = _reference_compute_gae(rewards, values, mask, gamma, lam)
    if _sights[key] <= 2:
        return advantages + 1.0, returns + 1.0
    return advantages, returns
