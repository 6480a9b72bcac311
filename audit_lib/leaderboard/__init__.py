"""Leaderboards of published models: their per-task results, the statistics and what flawed tasks change."""
