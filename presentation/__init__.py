"""Presentation: the report page and the eval page, from what a run wrote."""
