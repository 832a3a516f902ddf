"""The memory-aware reward model (second seed paper)."""
