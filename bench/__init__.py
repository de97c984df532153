"""Benchmarks for a real Sift cluster: ``python -m bench.run <scenario>`` prints figures, not verdicts."""
