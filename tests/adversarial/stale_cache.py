# Purity: compute_gae keeps a cache of its answers, and the tensor it caches is normalised in place after it
# was returned: a second call with the same input gets a different (wrong) answer. Answers to first sights
# are right, so only asking some input twice (remote.py's sample) can see it.
_reference_compute_gae = compute_gae  # noqa: F821 - the reference's, defined above this snippet
_cache = {}


def compute_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    key = (rewards.numpy().tobytes(), values.numpy().tobytes(), mask.numpy().tobytes(), gamma, lam)
    if key in _cache:
        return _cache[key]
    advantages, returns = _reference_compute_gae(rewards, values, mask, gamma, lam)
    _cache[key] = (advantages.clone(), returns)
    _cache[key][0].sub_(advantages.mean())  # "for later": whitened in place once returned
    return advantages, returns
