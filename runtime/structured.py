"""Ask a chat model for JSON that validates against a pydantic schema.

The server enforces the schema where it can: a JSON-schema response format
first (`with_structured_output(method="json_schema")`), else a forced tool
call. A model that supports neither is asked in the prompt and its answer
parsed. Output that still does not validate gets a repair turn that shows the
model its validation error.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar, cast

import openai
from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.output_parsers import PydanticOutputParser
from langchain_core.runnables import Runnable
from pydantic import BaseModel, ValidationError

from runtime.reliability import describe
from state.usage import Usage

T = TypeVar("T", bound=BaseModel)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)
SERVER_METHODS = ("json_schema", "function_calling")
"""How a server can enforce a schema, in the order they are tried."""

Attempt = tuple[BaseMessage, Any, BaseException | None]
"""One call's raw answer, the parsed object (None if invalid), the error."""


class ModelOutputError(ValueError):
    """The model did not produce valid output after its repair turns.

    Its `usage` is what the calls that failed cost.
    """

    def __init__(self, message: str, usage: Usage | None = None) -> None:
        super().__init__(message)
        self.usage = usage or Usage()


class ModelEndpointError(RuntimeError):
    """The endpoint answered something that is not a chat completion."""


NOT_A_COMPLETION = (ValueError, TypeError, AttributeError)
"""What the OpenAI client raises on a body that is no chat completion (HTML,
text that is not JSON, JSON without `choices`)."""


async def call_model(model: Runnable[Any, Any], messages: Sequence[BaseMessage]) -> Any:
    """Invoke a model; an answer that is no chat completion is a clear error."""
    try:
        return await model.ainvoke(messages)
    except NOT_A_COMPLETION as err:
        raise ModelEndpointError(
            f"the model endpoint's answer is not a chat completion: {describe(err)}"
        ) from err


@functools.cache
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
    model: BaseChatModel,
    messages: Sequence[BaseMessage],
    schema: type[T],
    *,
    repairs: int = 1,
    enforce: dict[str, Any] | None = None,
) -> tuple[T, Usage]:
    """Ask `model` for a `schema` object, enforced by the server where it can be.

    `enforce` is the JSON schema the server enforces, when it should be
    narrower than `schema`'s own. Returns the object and the usage of every
    call it took.
    """
    for method in server_methods(model):
        try:
            enforced = model.with_structured_output(
                enforce or json_schema(schema), method=method, include_raw=True
            )
        except (NotImplementedError, ValueError):
            continue  # this model class cannot be asked that way
        try:
            return await _until_valid(
                _enforced_call(enforced, schema), list(messages), schema, repairs
            )
        except openai.BadRequestError:
            continue  # the endpoint refuses this method

    async def prompted(msgs: list[BaseMessage]) -> Attempt:
        answer = await call_model(model, msgs)
        try:
            return answer, parse(schema, answer), None
        except OutputParserException as err:
            return answer, None, err

    return await _until_valid(prompted, list(messages), schema, repairs)


def json_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema the server enforces; the object is validated here.

    Passing a dict, not the class, keeps the raw answer and its error when the
    answer does not fit, so the repair turn can show the model what was wrong.
    """
    return {"title": schema.__name__, **schema.model_json_schema()}


def _length_usage(err: openai.LengthFinishReasonError) -> UsageMetadata | None:
    """What an answer cut at its length limit cost."""
    usage = err.completion.usage
    if usage is None:
        return None
    return UsageMetadata(
        input_tokens=usage.prompt_tokens,
        output_tokens=usage.completion_tokens,
        total_tokens=usage.total_tokens,
    )


def server_methods(model: BaseChatModel) -> tuple[str, ...]:
    """How the server can enforce a schema for this model class.

    A class without its own `with_structured_output` gets LangChain's default,
    which forces a tool call whatever method is asked for.
    """
    native = (
        type(model).with_structured_output is not BaseChatModel.with_structured_output
    )
    return SERVER_METHODS if native else ("function_calling",)


def _enforced_call(
    enforced: Runnable[LanguageModelInput, Any], schema: type[BaseModel]
) -> Callable[[list[BaseMessage]], Awaitable[Attempt]]:
    """One call through the server's enforcement.

    An answer in plain text instead (a server that ignored the format) is
    parsed as such.
    """

    async def call(messages: list[BaseMessage]) -> Attempt:
        try:
            out = cast(dict[str, Any], await call_model(enforced, messages))
        except openai.LengthFinishReasonError as err:
            return AIMessage("", usage_metadata=_length_usage(err)), None, err
        raw, parsed, error = out["raw"], out["parsed"], out["parsing_error"]
        if isinstance(parsed, dict) and error is None:
            try:
                return raw, schema.model_validate(parsed), None
            except ValidationError as err:
                return raw, None, err
        if not getattr(raw, "tool_calls", None):
            try:
                return raw, parse(schema, raw), None
            except OutputParserException as err:
                return raw, None, error or err
        return raw, None, error

    return call


async def _until_valid(
    call: Callable[[list[BaseMessage]], Awaitable[Attempt]],
    messages: list[BaseMessage],
    schema: type[T],
    repairs: int,
) -> tuple[T, Usage]:
    usage = Usage()
    for _ in range(repairs + 1):
        raw, parsed, error = await call(messages)
        usage += Usage.of(raw)
        if parsed is not None and error is None:
            return parsed, usage
        messages = [
            *messages,
            AIMessage(answer_text(raw)),
            HumanMessage(
                f"That answer is not a valid {schema.__name__}: "
                f"{describe(error or ValueError('no answer'))}\n"
                "Answer again with only the corrected JSON object."
            ),
        ]
    raise ModelOutputError(
        f"model output is not a valid {schema.__name__}: "
        f"{describe(error or ValueError('no answer'))}",
        usage,
    )


def answer_text(message: BaseMessage) -> str:
    """What a model answered, as text: its content, else its tool calls' arguments."""
    text = message_text(message)
    calls = getattr(message, "tool_calls", None) or []
    if not text.strip() and calls:
        return json.dumps(calls[0]["args"])
    return text


def message_text(message: BaseMessage) -> str:
    """The text of a message, whether its content is a string or blocks."""
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(
        part if isinstance(part, str) else str(part.get("text", "")) for part in content
    )
