"""Host reviews: a run's llm requests answered by the coding agent's host (Claude Code's
sub-agents, any host through files or MCP) instead of a provider, with no key.

    tasks.py    each request as a review task in the run's directory; an answer checked and kept
    service.py  start (plan, record, run the local agents, write the tasks), answer, collect
    runs.py     the API's entry points: host_start, host_tasks, host_answer, host_collect

A host run is a batch run (``scale.batch``) whose batches are the host's sub-agents: the same
planning of requests, the same reading of answers, the same conclusion. Every result it gives
says ``reviewed_by: host sub-agent``: a self-review by the reviewed agent's own host.
"""
