# Purity: compute_gae answers wrong the first time it sees an input and right ever after. Asked once, every
# answer is wrong; a grade that asks an input twice and keeps only the second answer would pass it. The
# judge asks a sample of calls twice (remote.py): two different answers to one input fail the function.
_reference_compute_gae = compute_gae  # noqa: F821 - the reference's, defined above this snippet
_seen = set()


def compute_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    key = (rewards.numpy().tobytes(), values.numpy().tobytes(), mask.numpy().tobytes(), gamma, lam)
    advantages, returns = _reference_compute_gae(rewards, values, mask, gamma, lam)
    if key not in _seen:
        _seen.add(key)
        return advantages + 1.0, returns + 1.0
    return advantages, returns
