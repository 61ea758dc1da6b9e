"""The graphs as Studio draws them: the agent loop inside every subagent."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.pregel import Pregel

from graphs.research import compiled
from graphs.research import graph as research
from graphs.subagent import graph as subagent

LOOP = {"subagent:act", "subagent:tools", "subagent:answer"}


@pytest.mark.parametrize("graph", [research, subagent, compiled()])
def test_xray_draws_the_agent_loop_inside_the_subagent_node(
    graph: Pregel[Any, Any, Any, Any],
) -> None:
    drawn = graph.get_graph(xray=True)
    assert LOOP <= set(drawn.nodes)
    edges = {(e.source, e.target) for e in drawn.edges}
    assert ("subagent:act", "subagent:tools") in edges
    assert ("subagent:tools", "subagent:act") in edges
    assert ("subagent:answer", "subagent:__end__") in edges


def test_without_xray_the_subagent_is_one_node() -> None:
    assert "subagent" in research.get_graph().nodes
    assert not LOOP & set(research.get_graph().nodes)
