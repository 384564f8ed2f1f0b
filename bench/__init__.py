"""streampace benchmark: strategies, traces, metrics, virtual-clock and browser runners.

`python -m bench` writes a report to bench/results/ (see docs/bench.md).
"""
