"""``review-gate mcp``: the MCP server (``server``) and what it fixes when it starts
(``fixed_at_start``)."""
