"""Benchmarks for codegraph: run each as `python -m benchmarks.<name>` from the repository root."""
