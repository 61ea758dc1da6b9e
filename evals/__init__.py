"""Evaluation datasets, metrics and runner."""
