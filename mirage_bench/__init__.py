"""MirageBench: over-inference in personalized LLMs, as a dataset, metrics, an engine and a leaderboard."""

__version__ = "0.1.0"

from mirage_bench import _layout

_layout.install()  # a checkout: mirage_bench.dataset_builder / mirage_bench.space are the root folders
