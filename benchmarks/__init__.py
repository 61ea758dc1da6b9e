"""Benchmarks of delegator: `make bench` runs them all (see `benchmarks.run`)."""

import os

# As `make` exports them, before any module imports LangGraph.
os.environ.setdefault("LANGGRAPH_STRICT_MSGPACK", "true")
os.environ.setdefault("LANGSMITH_TRACING", "false")
os.environ.setdefault("LANGGRAPH_NO_VERSION_CHECK", "true")
