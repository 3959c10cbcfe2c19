"""Shared by the matching apps (sm, count, gsword): the planner (candidate filters,
matching orders, symmetry breaking, the record layout) and the named query patterns."""
