"""Known mistakes and correct variants of bradley_terry_loss and ranking_loss (part rm_loss)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from autograder.lab.bank import mistake, variant

# ------------------------------------------------------------------ bradley_terry_loss: mistakes


@mistake("rm_loss", "bradley_terry_loss", "bt_swapped", fails="rm_loss.bt_known_values",
         hint="the preferred and the rejected rewards look swapped: use -log sigmoid(r_better - r_worse)")
def bt_swapped(r_better, r_worse):
    return -F.logsigmoid(r_worse - r_better).mean()


@mistake("rm_loss", "bradley_terry_loss", "bt_no_minus", fails="rm_loss.bt_known_values",
         hint="your loss has the wrong sign: it is -log sigmoid(gap), a number >= 0 to minimise")
def bt_no_minus(r_better, r_worse):
    return F.logsigmoid(r_better - r_worse).mean()


@mistake("rm_loss", "bradley_terry_loss", "bt_sum", fails="rm_loss.bt_known_values",
         hint="your loss looks summed over the pairs: take the mean")
def bt_sum(r_better, r_worse):
    return -F.logsigmoid(r_better - r_worse).sum()


@mistake("rm_loss", "bradley_terry_loss", "bt_log_of_sigmoid", fails="rm_loss.bt_stable",
         hint="log(sigmoid(x)) underflows to log(0) = -inf for very negative gaps: use F.logsigmoid")
def bt_log_of_sigmoid(r_better, r_worse):
    return -torch.log(torch.sigmoid(r_better - r_worse)).mean()


@mistake("rm_loss", "bradley_terry_loss", "bt_log1p_exp", fails="rm_loss.bt_stable",
         hint="log(1 + exp(-gap)) overflows for very negative gaps: use F.logsigmoid or F.softplus")
def bt_log1p_exp(r_better, r_worse):
    return torch.log1p(torch.exp(-(r_better - r_worse))).mean()


@mistake("rm_loss", "bradley_terry_loss", "bt_where_nan_grad", fails="rm_loss.bt_stable",
         hint="a torch.where between two formulas gives nan gradients (the unused branch overflows): "
              "use F.logsigmoid")
def bt_where_nan_grad(r_better, r_worse):
    gap = r_better - r_worse
    return torch.where(gap > 0, torch.log1p(torch.exp(-gap)), -gap + torch.log1p(torch.exp(gap))).mean()


@mistake("rm_loss", "bradley_terry_loss", "bt_detached", fails="rm_loss.bt_matches_reference", says="detached",
         hint="no gradient flows to the rewards: do not rebuild the loss with torch.tensor or .item()")
def bt_detached(r_better, r_worse):
    return torch.tensor(-F.logsigmoid(r_better - r_worse).mean().item(), dtype=r_better.dtype)


@mistake("rm_loss", "bradley_terry_loss", "bt_abs_trick", fails="rm_loss.bt_matches_reference",
         hint="at a tie (r_better == r_worse) -log sigmoid(gap) is smooth and its gradient is -1/2 per pair: "
              "abs() and relu() have gradient 0 at 0, so tied rewards (a reward model at w = 0) never learn; "
              "use F.logsigmoid or F.softplus")
def bt_abs_trick(r_better, r_worse):
    gap = r_better - r_worse
    return (torch.relu(-gap) + torch.log1p(torch.exp(-gap.abs()))).mean()


@mistake("rm_loss", "bradley_terry_loss", "bt_sigmoid_not_log", fails="rm_loss.bt_known_values",
         hint="your loss looks like -sigmoid(gap): the Bradley-Terry loss is the negative LOG-likelihood")
def bt_sigmoid_not_log(r_better, r_worse):
    return -torch.sigmoid(r_better - r_worse).mean()


# ------------------------------------------------------------------ bradley_terry_loss: correct variants


@variant("rm_loss", "bradley_terry_loss", "bt_softplus")
def bt_softplus(r_better, r_worse):
    return F.softplus(r_worse - r_better).mean()


@variant("rm_loss", "bradley_terry_loss", "bt_float64_loop")
def bt_float64_loop(r_better, r_worse):
    terms = [-F.logsigmoid(b.double() - w.double()) for b, w in zip(r_better, r_worse)]
    return (sum(terms) / len(terms)).to(r_better.dtype)


# ------------------------------------------------------------------ ranking_loss: mistakes


@mistake("rm_loss", "ranking_loss", "ranking_as_ranks", fails="rm_loss.ranking_known_values",
         hint="ranking[n, k] is the index of the k-th best response (best first), not the rank of response k")
def ranking_as_ranks(rewards, ranking):
    K = rewards.shape[1]
    ordered = rewards.gather(1, ranking.argsort(1))
    above, below = torch.triu_indices(K, K, offset=1)
    return -F.logsigmoid(ordered[:, above] - ordered[:, below]).mean()


@mistake("rm_loss", "ranking_loss", "ranking_ignored", fails="rm_loss.ranking_matches_reference",
         hint="your loss looks like it ignores `ranking` (as if the responses were already best first)")
def ranking_ignored(rewards, ranking):
    K = rewards.shape[1]
    above, below = torch.triu_indices(K, K, offset=1)
    return -F.logsigmoid(rewards[:, above] - rewards[:, below]).mean()


@mistake("rm_loss", "ranking_loss", "ranking_worst_first", fails="rm_loss.ranking_known_values",
         hint="your pairs look reversed: ranking[n, 0] is the BEST response, and a pair (a above b) "
              "gives -log sigmoid(r_a - r_b)")
def ranking_worst_first(rewards, ranking):
    K = rewards.shape[1]
    ordered = rewards.gather(1, ranking)
    above, below = torch.triu_indices(K, K, offset=1)
    return -F.logsigmoid(ordered[:, below] - ordered[:, above]).mean()


@mistake("rm_loss", "ranking_loss", "ranking_adjacent_pairs", fails="rm_loss.ranking_pairs_mean",
         hint="only neighbouring pairs in the ranking are used: every one of the K(K-1)/2 pairs counts")
def ranking_adjacent_pairs(rewards, ranking):
    ordered = rewards.gather(1, ranking)
    return -F.logsigmoid(ordered[:, :-1] - ordered[:, 1:]).mean()


@mistake("rm_loss", "ranking_loss", "ranking_best_vs_rest", fails="rm_loss.ranking_pairs_mean",
         hint="only pairs with the best response are used: every one of the K(K-1)/2 pairs counts")
def ranking_best_vs_rest(rewards, ranking):
    ordered = rewards.gather(1, ranking)
    return -F.logsigmoid(ordered[:, :1] - ordered[:, 1:]).mean()


@mistake("rm_loss", "ranking_loss", "ranking_sum_pairs", fails="rm_loss.ranking_pairs_mean",
         hint="your loss looks summed over the pairs of a prompt: take the mean over all pairs")
def ranking_sum_pairs(rewards, ranking):
    K = rewards.shape[1]
    ordered = rewards.gather(1, ranking)
    above, below = torch.triu_indices(K, K, offset=1)
    return -F.logsigmoid(ordered[:, above] - ordered[:, below]).sum(1).mean()


@mistake("rm_loss", "ranking_loss", "ranking_sum_prompts", fails="rm_loss.ranking_pairs_mean",
         hint="your loss looks summed over the prompts: take the mean over all pairs of all prompts")
def ranking_sum_prompts(rewards, ranking):
    K = rewards.shape[1]
    ordered = rewards.gather(1, ranking)
    above, below = torch.triu_indices(K, K, offset=1)
    return -F.logsigmoid(ordered[:, above] - ordered[:, below]).mean(1).sum()


@mistake("rm_loss", "ranking_loss", "ranking_with_self_pairs", fails="rm_loss.ranking_pairs_mean",
         hint="each response is also paired with itself (a pair i <= j): use only pairs i < j")
def ranking_with_self_pairs(rewards, ranking):
    K = rewards.shape[1]
    ordered = rewards.gather(1, ranking)
    above, below = torch.triu_indices(K, K, offset=0)
    return -F.logsigmoid(ordered[:, above] - ordered[:, below]).mean()


@mistake("rm_loss", "ranking_loss", "ranking_both_directions", fails="rm_loss.ranking_matches_reference",
         hint="each pair counts in both directions: only a ranked above b gives -log sigmoid(r_a - r_b)")
def ranking_both_directions(rewards, ranking):
    K = rewards.shape[1]
    ordered = rewards.gather(1, ranking)
    above, below = torch.triu_indices(K, K, offset=1)
    gaps = ordered[:, above] - ordered[:, below]
    return -F.logsigmoid(torch.cat([gaps, -gaps], 1)).mean()


# ------------------------------------------------------------------ ranking_loss: correct variants


@variant("rm_loss", "ranking_loss", "ranking_python_loops")
def ranking_python_loops(rewards, ranking):
    N, K = rewards.shape
    terms = []
    for n in range(N):
        for i in range(K):
            for j in range(i + 1, K):
                a, b = ranking[n, i], ranking[n, j]
                terms.append(F.softplus(rewards[n, b] - rewards[n, a]))
    return torch.stack(terms).mean()


@variant("rm_loss", "ranking_loss", "ranking_position_matrix")
def ranking_position_matrix(rewards, ranking):
    position = ranking.argsort(1)  # position[n, k]: place of response k in the ranking (0 = best)
    above = (position[:, :, None] < position[:, None, :]).to(rewards.dtype)  # (N, K, K): a above b
    gaps = rewards[:, :, None] - rewards[:, None, :]
    return (-F.logsigmoid(gaps) * above).sum() / above.sum()


@variant("rm_loss", "ranking_loss", "ranking_via_bt_pairs")
def ranking_via_bt_pairs(rewards, ranking):
    K = rewards.shape[1]
    better, worse = [], []
    for i in range(K - 1):
        for j in range(i + 1, K):
            better.append(rewards.gather(1, ranking[:, i:i + 1]))
            worse.append(rewards.gather(1, ranking[:, j:j + 1]))
    return bradley_terry_loss(torch.cat(better, 1).reshape(-1), torch.cat(worse, 1).reshape(-1))  # noqa: F821
