"""Ask a chat model for JSON that validates against a pydantic schema."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TypeVar

from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.output_parsers import PydanticOutputParser
from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


class ModelOutputError(ValueError):
    """The model did not produce valid output after a repair attempt."""


def schema_instructions(schema: type[BaseModel]) -> str:
    """The format instructions to append to a prompt asking for `schema`."""
    return PydanticOutputParser(pydantic_object=schema).get_format_instructions()


def parse(schema: type[T], message: BaseMessage) -> T:
    """Validate the JSON object in a model message, strictly.

    A fenced block or the outermost braces are taken; truncated or partial JSON
    is refused rather than completed.
    """
    text = message_text(message).strip()
    if fenced := _FENCE.search(text):
        text = fenced.group(1)
    elif (start := text.find("{")) >= 0 and (end := text.rfind("}")) > start:
        text = text[start : end + 1]
    try:
        return schema.model_validate(json.loads(text))
    except json.JSONDecodeError as err:
        raise OutputParserException(f"invalid JSON: {err}") from err
    except ValidationError as err:
        raise OutputParserException(
            f"JSON does not fit {schema.__name__}: {err}"
        ) from err


async def ainvoke_structured(
    model: BaseChatModel, messages: Sequence[BaseMessage], schema: type[T]
) -> tuple[T, int]:
    """Invoke `model` and parse its answer; on bad output ask once to repair it.

    Returns the parsed object and the tokens used.
    """
    answer = await model.ainvoke(messages)
    tokens = tokens_used(answer)
    try:
        return parse(schema, answer), tokens
    except OutputParserException as first:
        repair = HumanMessage(
            "Your answer was not valid JSON for the schema: "
            f"{_short(str(first))}\nAnswer again with only the JSON object."
        )
        retry = await model.ainvoke([*messages, answer, repair])
        tokens += tokens_used(retry)
        try:
            return parse(schema, retry), tokens
        except OutputParserException as second:
            raise ModelOutputError(
                f"model output is not a valid {schema.__name__}: {_short(str(second))}"
            ) from second


def tokens_used(message: BaseMessage) -> int:
    """Total tokens a model message reports, 0 if it reports none."""
    usage = getattr(message, "usage_metadata", None)
    return int(usage["total_tokens"]) if usage else 0


def message_text(message: BaseMessage) -> str:
    """The text of a message, whether its content is a string or blocks."""
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(
        part if isinstance(part, str) else str(part.get("text", "")) for part in content
    )


def _short(text: str, limit: int = 500) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"
