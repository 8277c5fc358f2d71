"""The bank of known mistakes and correct variants (grading/bank) against the checks.

Every part's bank has at least eight mistakes, each with a one-line hint, and at least two correct
variants. Graded on its own part, a variant gets full marks and a mistake loses points, failing at least
the check named below, each failed check showing the input that exposes it. (`python -m autograder
validate` also checks that a mistake costs nothing in the other parts, and that its hint is named.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from training import probe_inputs

from autograder import bank, config
from autograder.grade import grade

ENTRIES = bank.load_all()
PARTS = list(config.load().parts)
# mistake -> a check it must fail (more may fail too)
MUST_FAIL = {
    "rm_loss.bt_swapped": "rm_loss.bt_known_values",
    "rm_loss.bt_no_minus": "rm_loss.bt_known_values",
    "rm_loss.bt_sum": "rm_loss.bt_known_values",
    "rm_loss.bt_log_of_sigmoid": "rm_loss.bt_stable",
    "rm_loss.bt_log1p_exp": "rm_loss.bt_stable",
    "rm_loss.bt_where_nan_grad": "rm_loss.bt_stable",
    "rm_loss.bt_detached": "rm_loss.bt_matches_reference",
    "rm_loss.bt_sigmoid_not_log": "rm_loss.bt_known_values",
    "rm_loss.ranking_as_ranks": "rm_loss.ranking_known_values",
    "rm_loss.ranking_ignored": "rm_loss.ranking_matches_reference",
    "rm_loss.ranking_worst_first": "rm_loss.ranking_known_values",
    "rm_loss.ranking_adjacent_pairs": "rm_loss.ranking_pairs_mean",
    "rm_loss.ranking_best_vs_rest": "rm_loss.ranking_pairs_mean",
    "rm_loss.ranking_sum_pairs": "rm_loss.ranking_pairs_mean",
    "rm_loss.ranking_sum_prompts": "rm_loss.ranking_pairs_mean",
    "rm_loss.ranking_with_self_pairs": "rm_loss.ranking_pairs_mean",
    "rm_loss.ranking_both_directions": "rm_loss.ranking_matches_reference",
    "gae.forward_recursion": "gae.matches_reference",
    "gae.no_mask": "gae.padding_ignored",
    "gae.mask_off_by_one": "gae.padding_ignored",
    "gae.whitened_inside": "gae.matches_reference",
    "gae.gamma_lam_swapped": "gae.lambda_zero_td_error",
    "gae.no_gamma_in_delta": "gae.lambda_zero_td_error",
    "gae.no_gamma_lam_in_recursion": "gae.lambda_one_reward_to_go",
    "gae.returns_reward_to_go": "gae.returns_are_advantages_plus_values",
    "gae.outputs_swapped": "gae.returns_are_advantages_plus_values",
    "gae.next_value_wraps_around": "gae.lambda_zero_td_error",
    "kl.reversed_log_ratio": "kl.estimate_matches_reference",
    "kl.k2_without_half": "kl.estimators_known_values",
    "kl.k3_exp_d": "kl.unbiased_and_nonnegative",
    "kl.k3_minus_d": "kl.unbiased_and_nonnegative",
    "kl.k1_abs": "kl.unbiased_and_nonnegative",
    "kl.kind_ignored": "kl.estimate_matches_reference",
    "kl.unknown_kind_accepted": "kl.estimators_known_values",
    "kl.score_on_first_token": "kl.shaped_known_values",
    "kl.score_on_last_column": "kl.shaped_known_values",
    "kl.score_one_past_the_end": "kl.shaped_matches_reference",
    "kl.score_one_early": "kl.shaped_matches_reference",
    "kl.score_replaces_penalty": "kl.shaped_matches_reference",
    "kl.penalty_without_beta": "kl.shaped_matches_reference",
    "kl.penalty_plus_beta": "kl.shaped_known_values",
    "kl.kind_not_passed": "kl.shaped_matches_reference",
    "kl.penalty_summed_on_last_token": "kl.shaped_matches_reference",
    "kl.penalty_mean_with_padding": "kl.shaped_known_values",
    # from public code: each is caught only where the domain reaches far enough
    "ppo_clip.log_ratio_clamped": "ppo_clip.policy_matches_reference",      # |logp - old_logp| > 20
    "ppo_clip.dual_clip": "ppo_clip.policy_matches_reference",              # ratio > 3 with A < 0
    "ppo_clip.value_fixed_clip_eps": "ppo_clip.value_matches_reference",    # clip_eps != 0.2
    "kl.k3_clamped": "kl.estimate_matches_reference",                       # k3 > 10
    "kl.log_ratio_clamped_20": "kl.estimate_matches_reference",             # |d| > 20
    "kl.scores_clipped": "kl.shaped_matches_reference",                     # |score| > 5
    "kl.unknown_kind_not_implemented": "kl.estimators_known_values",        # also the differential checks
    "kl.verl_kind_names": "kl.estimate_matches_reference",                  # 'kl', 'abs', 'mse', 'low_var_kl'
    "gae.truncation_bootstrap": "gae.matches_reference",                    # full rows, T >= 2, gamma > 0
    # found in round 3: each reached only by the chosen examples
    "rm_loss.bt_abs_trick": "rm_loss.bt_matches_reference",                 # the gradient at a tie
    "kl.penalty_of_abs_d": "kl.shaped_matches_reference",                   # k1, beta > 1e-3, d < 0
}
# in these parts a mistake never raises: each of its failures shows expected against got
SHOWS_EXPECTED = {"gae", "ppo_clip"}
# mistakes that change only gradients: the failure must say the input was detached
DETACHED = {"ppo_clip.detached_logp", "ppo_clip.value_detached", "rm_loss.bt_detached"}


@pytest.mark.parametrize("part", PARTS)
def test_each_part_has_mistakes_with_hints_and_variants_of_each_function(part):
    entries = [e for e in ENTRIES if e.part == part]
    mistakes = [e for e in entries if e.is_mistake]
    assert len(mistakes) >= 8 and len(entries) - len(mistakes) >= 2
    assert len({e.name for e in entries}) == len(entries)
    for e in mistakes:
        assert e.hint and "\n" not in e.hint, e.id
    for function in config.load().parts[part]:
        assert any(not e.is_mistake and e.function == function for e in entries), function


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_every_entry_runs_as_a_submission(entry: bank.Entry):
    """An entry is self-contained: its submission (the reference + the entry) runs on a tiny valid input
    (a helper outside the entry would raise NameError there, and be 'caught' for the wrong reason)."""
    namespace: dict = {}
    exec(compile(bank.submission_source(entry), entry.id, "exec"), namespace)  # trusted bank code
    args = probe_inputs()[entry.function]
    grad = [a.clone().requires_grad_(a.is_floating_point()) if isinstance(a, torch.Tensor) else a for a in args]
    namespace[entry.function](*grad)


def test_mistakes_from_public_code_cite_their_source():
    public = [e for e in ENTRIES if e.impl.__module__ == "lab12.bank.public_code"]
    assert len(public) >= 16
    assert all(e.is_mistake and len(e.source) > 20 for e in public), [e.id for e in public if not e.source]


def test_must_fail_names_real_mistakes_and_checks():
    ids = {e.id for e in ENTRIES if e.is_mistake}
    assert set(MUST_FAIL) <= ids and DETACHED <= ids
    assert set(MUST_FAIL.values()) <= set(config.load().tests)


@pytest.mark.slow
@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_bank_entry_is_graded_as_expected(entry: bank.Entry, tmp_path: Path):
    path = tmp_path / "rlhf.py"
    path.write_text(bank.submission_source(entry))
    result = grade(path, only={entry.part})
    failed = {t.id: t.message for t in result.tests if not t.passed}
    if not entry.is_mistake:
        assert result.score == result.max_score, failed
        return
    assert result.score < result.max_score, f"{entry.id} got full marks"
    if entry.id in MUST_FAIL:
        assert MUST_FAIL[entry.id] in failed, failed
    if entry.id in DETACHED:
        assert any("detached" in message for message in failed.values()), failed
    for t in result.tests:  # a failed check shows the smallest failing input, unless the call raised
        assert t.passed or t.finding.kind or t.finding.inputs, t.id  # kind: the call itself failed
        if not t.passed and entry.part in SHOWS_EXPECTED:
            assert not t.finding.kind and t.finding.inputs and (t.finding.expected or t.finding.got), t.id
