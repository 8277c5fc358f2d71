"""A lab's declarations as the engine loads them: grading.yaml (config), the lab folder's paths, its hooks
(registry), the reference, the bank, the starter, the fingerprints of its data files, a new lab's files.

ARCHITECTURE.md: what each module of this room does."""
