"""Performance harness: each capability's benchmark, printing ratios against a baseline."""
