"""The coordinator's roles, each with its LLM and extractive implementations."""
