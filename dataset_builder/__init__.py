"""Builds and publishes the MirageBench Hugging Face dataset repository."""
