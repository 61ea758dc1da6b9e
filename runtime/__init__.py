"""Configuration, models, the knowledge base and telemetry."""
