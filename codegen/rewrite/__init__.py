"""Rewrite: apply a module's plan to its libcst tree."""
