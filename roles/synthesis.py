"""Write, LLM mode: the lead's cited synthesis that opens the report.

Extractive mode has no synthesis: its report is the quoted findings alone.
Citation markers that name no source are removed and counted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from runtime.models import lead_deadline
from runtime.structured import message_text, tokens_used
from state.findings import Finding
from state.report import Citation

_CITATION = re.compile(r"\[(\d+)\]")
SYNTHESIS_PROMPT = """You write the opening of a research report from numbered
evidence only. In at most four short paragraphs, answer the question. Cite every
statement with the numbers of the evidence it rests on, like [2] or [1][4]; use
no knowledge beyond the evidence. If values listed as not covered matter to the
question, say plainly that the evidence does not cover them. Answer with the
Markdown text only, no heading."""


@dataclass(frozen=True)
class Synthesis:
    """The synthesis text, the citation markers dropped from it, its tokens."""

    text: str
    citations_dropped: int
    tokens: int


def keep_valid_citations(text: str, valid: set[int]) -> tuple[str, int]:
    """Remove citation markers that point at no source; count them."""
    dropped = 0

    def check(marker: re.Match[str]) -> str:
        nonlocal dropped
        if int(marker.group(1)) in valid:
            return marker.group(0)
        dropped += 1
        return ""

    return _CITATION.sub(check, text), dropped


@dataclass(frozen=True)
class Synthesizer:
    """The lead model writing from numbered, verified evidence."""

    model: BaseChatModel
    timeout_s: float

    async def synthesize(
        self,
        question: str,
        findings: Sequence[Finding],
        citations: dict[str, Citation],
        gaps: Sequence[str],
    ) -> Synthesis:
        """The cited synthesis, within the lead's deadline."""
        evidence = "\n".join(
            f'[{citations[f.source.passage_id].number}] {f.claim} (quote: "{f.quote}")'
            for f in findings
        )
        missing = ", ".join(gaps) or "none"
        async with lead_deadline(self.timeout_s, "writing"):
            answer = await self.model.ainvoke(
                [
                    SystemMessage(SYNTHESIS_PROMPT),
                    HumanMessage(
                        f"Question: {question}\n\nEvidence:\n{evidence}\n\n"
                        f"Not covered: {missing}"
                    ),
                ]
            )
        valid = {c.number for c in citations.values()}
        text, dropped = keep_valid_citations(message_text(answer).strip(), valid)
        return Synthesis(text, dropped, tokens_used(answer))


def synthesizer(model: BaseChatModel | None, timeout_s: float) -> Synthesizer | None:
    """The lead's synthesizer, or None in extractive mode."""
    return None if model is None else Synthesizer(model, timeout_s)
