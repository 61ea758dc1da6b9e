"""Chat models per role, from spec strings: 'openai:<model>', 'extractive', 'auto'."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable

from langchain_core.language_models import BaseChatModel
from langchain_core.rate_limiters import InMemoryRateLimiter

EXTRACTIVE = "extractive"
DEFAULT_OPENAI_MODEL = "gpt-4o-mini"

ModelFactory = Callable[[str], BaseChatModel]


class ModelSpecError(ValueError):
    """A model spec that names no known provider."""


def _openai(name: str) -> BaseChatModel:
    from langchain_openai import ChatOpenAI

    base_url = os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE")
    api_key = os.environ.get("OPENAI_API_KEY") or ("unused" if base_url else None)
    rps = float(os.environ.get("DELEGATOR_REQUESTS_PER_SECOND", "4"))
    return ChatOpenAI(
        model=name,
        base_url=base_url,
        api_key=api_key,
        temperature=0,
        timeout=120,
        max_retries=2,
        rate_limiter=InMemoryRateLimiter(requests_per_second=rps, max_bucket_size=4),
    )


_PROVIDERS: dict[str, ModelFactory] = {"openai": _openai}


def register_provider(name: str, factory: ModelFactory) -> None:
    """Make `<name>:<model>` specs build models with `factory`."""
    _PROVIDERS[name] = factory
    load_chat_model.cache_clear()


def resolve_spec(spec: str) -> str:
    """Turn 'auto' into a concrete spec; check the spec names a provider."""
    spec = spec.strip() or "auto"
    if spec == "auto":
        if os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL"):
            return "openai:" + os.environ.get("OPENAI_MODEL", DEFAULT_OPENAI_MODEL)
        return EXTRACTIVE
    if spec == EXTRACTIVE:
        return spec
    provider, sep, name = spec.partition(":")
    if not sep or not name or provider not in _PROVIDERS:
        known = ", ".join(f"'{p}:<model>'" for p in _PROVIDERS)
        raise ModelSpecError(
            f"unknown model spec {spec!r}: use 'auto', 'extractive' or {known}"
        )
    return spec


@functools.cache
def load_chat_model(spec: str) -> BaseChatModel | None:
    """The chat model a spec names, or None in extractive mode."""
    spec = resolve_spec(spec)
    if spec == EXTRACTIVE:
        return None
    provider, _, name = spec.partition(":")
    return _PROVIDERS[provider](name)
