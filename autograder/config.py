"""Load grading.yaml into typed settings (see docs/grading-yaml.md for every key)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

import yaml

from autograder.paths import GRADING_YAML
from autograder.sandbox import Limits

VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")


class ConfigError(Exception):
    """grading.yaml is missing a key or has a wrong value."""


@dataclass(frozen=True)
class TestSpec:
    id: str
    points: float
    visibility: str


@dataclass(frozen=True)
class Config:
    raw: dict
    parts: dict[str, list[str]]
    tests: dict[str, TestSpec]
    e2e: dict[str, dict]
    hypothesis: dict
    limits: Limits
    grade_seconds: float

    def part_of(self, function: str) -> str:
        return next(p for p, fns in self.parts.items() if function in fns)


def load(path: Path = GRADING_YAML) -> Config:
    raw = yaml.safe_load(Path(path).read_text())
    default = raw.get("default_visibility", "after_due_date")
    tests = {}
    for test_id, spec in {**raw["tests"], **{f"e2e.{k}": v for k, v in raw["e2e"].items()}}.items():
        visibility = spec.get("visibility", default)
        if visibility not in VISIBILITIES:
            raise ConfigError(f"{test_id}: visibility must be one of {', '.join(VISIBILITIES)}")
        if not isinstance(spec.get("points"), (int, float)) or spec["points"] < 0:
            raise ConfigError(f"{test_id}: points must be a non-negative number")
        tests[test_id] = TestSpec(test_id, float(spec["points"]), visibility)
    limits_raw = dict(raw["limits"])
    grade_seconds = float(limits_raw.pop("grade_seconds"))
    known = {f.name for f in fields(Limits)}
    if set(limits_raw) - known:
        raise ConfigError(f"unknown limits: {', '.join(sorted(set(limits_raw) - known))}")
    return Config(raw=raw, parts=raw["parts"], tests=tests, e2e=raw["e2e"], hypothesis=raw["hypothesis"],
                  limits=Limits(**limits_raw), grade_seconds=grade_seconds)
