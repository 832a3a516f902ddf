"""The hosted leaderboard service, one module per job.

- :mod:`.store` — the request/result store (submission requests, uploads, result folders).
- :mod:`.checks` — validation of uploaded responses and submission metadata.
- :mod:`.endpoint_check` — the one-message check of a submitted OpenAI-compatible endpoint.
- :mod:`.worker` — the queue worker that judges submissions with the configured judge.
- :mod:`.board` — leaderboard rows: measured rows, reported rows, the board view.

``space/`` is the UI over these modules; it never calls a model itself.
"""
