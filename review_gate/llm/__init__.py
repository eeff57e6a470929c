"""The ``llm`` agent kind's parts: prompt, chunking, answer parsing and the two wire formats."""
