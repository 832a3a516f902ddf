"""The leaderboard request/result store (local files by default)."""
