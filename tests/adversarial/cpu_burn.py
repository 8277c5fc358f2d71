# Spin inside compute_gae (without ignoring signals): the CPU-time limit stops it before the wall-time one.
def compute_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    while True:
        pass
