"""The grader's checks on itself: validation against the mistake bank, and calibration of the
end-to-end tests (see docs/validity.md and docs/calibration.md)."""
