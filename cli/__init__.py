"""The `delegator` command."""
