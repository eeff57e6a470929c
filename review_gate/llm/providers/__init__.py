"""The two wire formats, each a module that is a ``llm.client.Provider``: ``request(spec, key,
system, user, schema=..., name=...) -> (url, headers, body)`` builds one question, and
``reply(data, raw, name=...) -> Reply`` reads the answer (raising ``Unusable`` for one cut off or
empty). ``common`` holds what both share: the reply, error mapping, reading a bounded body."""
