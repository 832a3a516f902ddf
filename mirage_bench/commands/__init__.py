"""CLI command groups, one module per area; each exposes ``register(app)``."""
