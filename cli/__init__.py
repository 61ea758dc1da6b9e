"""The `delegator` command.

Its checkpoints deserialize only the state's registered types: strict msgpack
is the command's default, set before LangGraph is imported (an explicit
`LANGGRAPH_STRICT_MSGPACK` in the environment wins).
"""

import os

os.environ.setdefault("LANGGRAPH_STRICT_MSGPACK", "true")
