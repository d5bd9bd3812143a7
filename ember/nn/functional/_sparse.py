"""Placeholder: filled in by the nn milestone."""
__all__ = []
