"""Per-family analysis: the numbers and sentences a report is built from."""
