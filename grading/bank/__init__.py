"""The lab's bank of known mistakes and correct variants (autograder/lab/bank.py: @mistake, @variant).

SAME_DIAGNOSIS: pairs of mistakes that answer alike wherever answers are compared (validity/confirmation.py: no
confirmation input can tell them apart), with why; the diagnosis names neither when both reproduce an answer.
"""

SAME_DIAGNOSIS = {
    frozenset({"rm_loss.bt_log_of_sigmoid", "rm_loss.bt_log1p_exp"}):
        "both are the reference's value wherever it is finite, and both overflow for very negative gaps (they "
        "differ only in a narrow band where float's subnormals keep sigmoid above 0); one advice: F.logsigmoid",
    frozenset({"rm_loss.bt_swapped", "rm_loss.ranking_worst_first"}):
        "through ranking_loss a Bradley-Terry loss with its arguments swapped is the ranking's pairs reversed",
    frozenset({"ppo_clip.value_clip_around_returns", "ppo_clip.value_no_clipping"}):
        "clipped around the returns, |V_clip - R| <= |V - R|: the max is always the unclipped term",
    frozenset({"kl.k1_abs", "kl.penalty_of_abs_d"}):
        "k2 and k3 are >= 0, so the absolute value of every estimate changes k1 alone, as k1_abs does",
    frozenset({"kl.kind_ignored", "kl.kind_not_passed"}):
        "through shaped_rewards both penalise with k1 for every kind, a rejected one included",
    frozenset({"kl.score_on_last_column", "kl.score_one_past_the_end"}):
        "both put the score on padding (not compared) except in a full row, where both put it on column T - 1",
}
