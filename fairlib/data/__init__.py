"""Cohort and benchmark loaders: real-data builders and seeded synthetic twins."""
