"""Verify, LLM mode: a fact checker subagent judges what the checks by code let by.

It runs after the checks by code, never instead of them: it may refuse a
finding whose claim says more than its quote, never add one. It reads only: it
is shown each finding's claim, quote and passage. A finding it gives no verdict
on is kept. A checker that fails keeps the verdicts of the batches it finished,
and says why it stopped: the run then did not complete as asked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from runtime.models import lead_deadline
from runtime.reliability import CONTROL_FLOW, describe
from runtime.sources import PassageLookup
from runtime.structured import ModelOutputError, ainvoke_structured
from state.agents import AgentManifest
from state.findings import Finding
from state.usage import Usage

BATCH = 8
"""Findings judged in one call."""
REFUSED = "the fact checker found the claim unsupported"


class Verdict(BaseModel):
    """The judgement of one numbered finding."""

    index: int = Field(ge=0, description="The finding's number.")
    supported: bool = Field(description="Whether its quote supports its claim.")
    reason: str = Field(default="", max_length=300, description="Why, briefly.")


class Verdicts(BaseModel):
    """One verdict per finding, in order."""

    verdicts: list[Verdict] = Field(default_factory=list, max_length=BATCH)


def finding_key(finding: Finding) -> str:
    """One string per finding, to remember its verdict across rounds."""
    return "\x1f".join(finding.span_key)


@dataclass(frozen=True)
class Judgement:
    """Verdicts by finding key (True: supported), their cost, and why it stopped.

    `failure` is None when every batch was judged.
    """

    verdicts: dict[str, bool]
    usage: Usage
    failure: str | None = None


@dataclass(frozen=True)
class FactChecker:
    """A fact checker definition on a model, within a time limit per batch."""

    manifest: AgentManifest
    model: BaseChatModel
    timeout_s: float

    async def judge(
        self, findings: Sequence[Finding], sources: PassageLookup
    ) -> Judgement:
        """Each finding's verdict, batch by batch, until one fails."""
        verdicts: dict[str, bool] = {}
        usage = Usage()
        for start in range(0, len(findings), BATCH):
            batch = findings[start : start + BATCH]
            try:
                answer, spent = await self._judge(batch, sources)
            except Exception as error:  # noqa: BLE001 - told in the judgement
                if isinstance(error, CONTROL_FLOW):
                    raise
                spent = error.usage if isinstance(error, ModelOutputError) else Usage()
                return Judgement(verdicts, usage + spent, describe(error))
            usage += spent
            for verdict in answer.verdicts:
                if verdict.index < len(batch):
                    verdicts[finding_key(batch[verdict.index])] = verdict.supported
        return Judgement(verdicts, usage)

    async def _judge(
        self, batch: Sequence[Finding], sources: PassageLookup
    ) -> tuple[Verdicts, Usage]:
        """One call's verdicts on a batch of findings."""
        cited = [f.source.passage_id for f in batch]
        passages = await asyncio.to_thread(sources.passages, cited)
        texts = [
            p.text if (p := passages.get(f.source.passage_id)) else "" for f in batch
        ]
        shown = "\n\n".join(
            f"Finding {n}\nClaim: {f.claim}\nQuote: {f.quote}\nPassage: {text}"
            for n, (f, text) in enumerate(zip(batch, texts, strict=True))
        )
        messages = [SystemMessage(self.manifest.system_prompt), HumanMessage(shown)]
        async with lead_deadline(self.timeout_s, "fact checking"):
            return await ainvoke_structured(self.model, messages, Verdicts)
