"""A callback that meters every model call made under it, whatever becomes of them.

Attached to a subagent's run, it keeps the count even when the run fails or
times out, which a count kept in the run's own state would lose.
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.outputs import ChatGeneration, LLMResult

from state.usage import Usage


class UsageMeter(AsyncCallbackHandler):
    """Adds up the usage every finished model call reports.

    It runs inline and skips chain events, so the many steps of a subagent
    cost it next to nothing.
    """

    run_inline = True

    def __init__(self) -> None:
        self.usage = Usage()

    @property
    def ignore_chain(self) -> bool:
        """Chain events carry no usage."""
        return True

    async def on_chat_model_start(self, *args: Any, **kwargs: Any) -> None:
        """Nothing to count yet (without this, each start is re-sent as text)."""

    async def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        """Count one finished call."""
        for generations in response.generations:
            for generation in generations:
                if isinstance(generation, ChatGeneration):
                    self.usage += Usage.of(generation.message)
