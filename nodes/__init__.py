"""The coordinator's nodes, one module each."""
