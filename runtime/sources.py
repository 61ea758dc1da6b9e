"""Where cited text is looked up: the knowledge base and the evidence tools returned.

Findings cite a passage id; verification, the fact checker and the page read
the cited text through `Sources`, which knows the knowledge base's passages
and the tool evidence a run recorded, so that every citation is checked the
same way whatever tool showed it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from runtime.kb import KnowledgeBase, Passage
from state.evidence import ToolEvidence


class PassageLookup(Protocol):
    """Finds cited passages by id."""

    def passage(self, passage_id: str) -> Passage | None:
        """The passage with this id, or None."""
        ...

    def passages(self, passage_ids: Iterable[str]) -> dict[str, Passage]:
        """The passages with these ids, by id; unknown ids are left out."""
        ...


OUTPUT_SECTION = "output"
"""The section of tool evidence: its text is the tool's output, nothing else."""


def as_passage(evidence: ToolEvidence) -> Passage:
    """Tool evidence as a passage: its own document, titled by its tool.

    Neither its title nor its section holds the arguments a model called the
    tool with, so only the output's own words can show what it is about.
    """
    return Passage(
        passage_id=evidence.evidence_id,
        doc_id=evidence.evidence_id,
        title=evidence.tool,
        url=evidence.url,
        section=OUTPUT_SECTION,
        text=evidence.text,
    )


@dataclass(frozen=True)
class Sources:
    """The knowledge base's passages and a run's recorded tool evidence, by id."""

    kb: KnowledgeBase
    recorded: Mapping[str, ToolEvidence] = field(default_factory=dict)

    def passage(self, passage_id: str) -> Passage | None:
        """The passage or recorded evidence with this id, or None."""
        return self.passages([passage_id]).get(passage_id)

    def passages(self, passage_ids: Iterable[str]) -> dict[str, Passage]:
        """The passages and recorded evidence with these ids, by id."""
        ids = list(passage_ids)
        found = {i: as_passage(self.recorded[i]) for i in ids if i in self.recorded}
        return found | self.kb.passages(i for i in ids if i not in found)
