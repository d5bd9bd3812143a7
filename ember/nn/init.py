"""Placeholder: filled in by the nn milestone (ember.nn.init)."""
