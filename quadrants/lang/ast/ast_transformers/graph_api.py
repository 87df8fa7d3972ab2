"""Quadrants' import path of the graph constructs' spelling checks: frontend/graph_api.py."""

from quadrants.frontend.graph_api import is_deprecated_spelling, matches, warn_if_deprecated

__all__ = ["is_deprecated_spelling", "matches", "warn_if_deprecated"]
