"""A scripted subagent model over HTTP: it answers each brief with true quotes."""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from typing import Any

from runtime.kb import KnowledgeBase
from tests.openai_replay import Reply, role_of
from tests.unit.fakes import values_in_brief


class QuotingResearcher:
    """Answers a subagent's brief with the first sentence of each value's top passage.

    Requests for the model named `hang` are held for `hang_s`, and every
    request while `answering` is clear (at most as long); every answered brief
    is counted by its values in `asked`, across processes that call it.
    """

    def __init__(self, kb: KnowledgeBase, delay_s: float = 0.0, hang_s: float = 600):
        self.kb, self.delay_s, self.hang_s = kb, delay_s, hang_s
        self.asked: Counter[tuple[str, ...]] = Counter()
        self.lock = threading.Lock()
        self.answering = threading.Event()
        self.answering.set()

    def __call__(self, body: dict[str, Any]) -> Reply:
        assert role_of(body) == "subagent", role_of(body)
        if body.get("model") == "hang":
            return Reply(content="{}", delay_s=self.hang_s)
        self.answering.wait(self.hang_s)
        values = values_in_brief(str(body["messages"][1]["content"]))
        with self.lock:
            self.asked[tuple(values)] += 1
        findings = []
        for value in values:
            (passage,) = self.kb.search(value, 1)
            sentence = re.split(r"(?<=[.!?])\s+", passage.text)[0]
            findings.append(
                {
                    "claim": sentence,
                    "quote": sentence,
                    "passage_id": passage.passage_id,
                    "values": [value],
                    "confidence": 0.9,
                }
            )
        answer = json.dumps({"findings": findings})
        return Reply(content=answer, delay_s=self.delay_s)
