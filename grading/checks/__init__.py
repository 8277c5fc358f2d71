"""The lab's checks: public/ (reference-free, shipped to students) and hidden/ (never shipped)."""
