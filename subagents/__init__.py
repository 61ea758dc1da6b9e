"""What a subagent is: definitions, registry, tools and its subgraph."""
