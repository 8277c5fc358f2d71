"""Where the bank's public mistakes come from: repository@commit path:lines (mirrors read on 2026-12-02), or a
paper. Each is another library's choice or bug that breaks this lab's contract (the contract says which)."""

TRL = "huggingface/trl@f2cd57710"
VERL = "volcengine/verl@b178a3cd5"
OPENRLHF = "OpenRLHF/OpenRLHF@3c3be623"
DR_GRPO = "sail-sg/understand-r1-zero@dfca49d"

TRL_BATCH_STD = (f"{TRL} trl/trainer/grpo_trainer.py:2694-2707 (scale_rewards='batch': advantages divided by the std "
                 "of the whole batch, not of each group)")
TRL_FIXED_EPS = f"{TRL} trl/trainer/grpo_trainer.py:2707 (advantages / (std_rewards + 1e-4): a fixed eps)"
TRL_GRPO_SEQ_MEAN = (f"{TRL} trl/trainer/grpo_trainer.py:3124-3136 (loss_type 'grpo' is the mean of row means, "
                     "'bnpo' the token mean, 'dr_grpo' the sum / (B * max_completion_length): one per loss_type)")
TRL_IPO_AVERAGE = (f"{TRL} trl/trainer/dpo_trainer.py:1440-1451 (IPO on per-token averaged log-probs: the length "
                   "normalisation TRL chose for IPO; this lab's sequence_logprob is the sum)")
TRL_HINGE = f"{TRL} trl/trainer/dpo_trainer.py:1437-1438 (loss_type 'hinge', SLiC: relu(1 - beta * h))"
VERL_SEQ_MEAN_TOKEN_SUM = (f"{VERL} verl/trainer/ppo/core_algos.py:1057-1062 (loss_agg_mode 'seq-mean-token-sum': "
                           "each row's token sum, averaged over rows)")
VERL_SUM_NORM_T = (f"{VERL} verl/trainer/ppo/core_algos.py:1072-1076 ('seq-mean-token-sum-norm': the sum divided by "
                   "loss_mask.shape[-1] = T alone, not by B * T)")
VERL_LOG_RATIO_CLAMP = f"{VERL} verl/trainer/ppo/core_algos.py:1128-1131 (log-ratio clamped to [-20, 20] before exp)"
VERL_K3_CLAMP = f"{VERL} verl/trainer/ppo/core_algos.py:1890-1894 (k3: d clamped to +-20, the estimate to +-10)"
VERL_GRPO_LOOP = f"{VERL} verl/trainer/ppo/core_algos.py:267-328 (compute_grpo_outcome_advantage: a loop over groups)"
OPENRLHF_RLOO = (f"{OPENRLHF} openrlhf/trainer/ppo_utils/experience_maker.py:264-266 (RLOO: a leave-one-out baseline, "
                 "another estimator)")
OPENRLHF_DPO = f"{OPENRLHF} openrlhf/models/loss.py:305-333 (DPOLoss: cDPO with label_smoothing; 0 gives DPO)"
DR_GRPO_PAPER = ("Liu et al., Understanding R1-Zero-Like Training: A Critical Perspective (arXiv 2503.20783), "
                 "sec. 3.1: "
                 "1/|o_i| gives a length bias, a length-dependent normaliser is what Dr. GRPO removes; "
                 f"{DR_GRPO} train_zero_math.py:286-291 (masked_sum with constant_normalizer=generate_max_length)")
