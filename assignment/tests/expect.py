"""`expect_close`: the public tests' comparison, whose failure shows the numbers (input, expected, got)."""

import torch


def expect_close(got, expected, what: str, inputs: dict, mask=None) -> None:
    """Assert got ~ expected (only where mask == 1, when a mask is given); on failure show `what`,
    every input by name, the expected and the got tensors (nan marks padding: not compared)."""
    if not isinstance(got, torch.Tensor):
        raise AssertionError(f"{what}: expected a tensor, got {type(got).__name__}: {got!r}")
    got, expected = got.detach(), expected.detach()
    if mask is not None:
        keep = mask.bool()
        got = torch.where(keep, got, torch.full_like(got, float("nan")))
        expected = torch.where(keep, expected, torch.full_like(expected, float("nan")))

    def message(details: str) -> str:
        shown = "\n".join(f"    {name} = {value}" for name, value in inputs.items())
        return (f"{what}\n  input:\n{shown}\n  expected: {expected}\n  got:      {got}\n"
                + ("  (nan marks padding: not compared)\n" if mask is not None else "") + details)

    torch.testing.assert_close(got.to(expected.dtype), expected, equal_nan=True, msg=message)
