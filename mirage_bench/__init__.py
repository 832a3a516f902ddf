"""MirageBench: over-inference in personalized LLMs, as a dataset, metrics, an engine and a leaderboard."""

__version__ = "0.1.0"
