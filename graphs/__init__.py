"""Graph assembly."""
