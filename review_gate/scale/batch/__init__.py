"""Provider batch execution (seed 003's external path): a run's llm requests sent to OpenAI's
Batch API or Anthropic's Message Batches, collected later into the ordinary report.

    models.py    the frozen run: what collecting it needs, stored in the run state at submit
    requests.py  the run's llm requests, planned and packed as a live run plans them
    wire.py      the files and batches endpoints of both wire formats
    ingest.py    result lines -> each agent's result, as a live answer would give it

``review_gate.api`` drives them: ``batch_submit``, ``batch_status``, ``batch_collect``.
"""
