"""What people and agents use: the command line (``cli``, one module per subcommand in
``commands``, all terminal output through ``console``), the coding agents' hooks (``hooks``),
the MCP server (``mcp``) and the agent report with the flagged lines quoted
(``quoted_agent_report``). The library facade beside them is ``review_gate.api``; nothing
below the surfaces imports them."""
