"""Contracts and graph states: pure data, no I/O."""
