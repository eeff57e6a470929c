"""The two wire formats. Each module has ``request(spec, key, system, user) -> (url, headers, body)``
and ``reply(status, headers, data) -> Reply``; ``call`` in ``common`` sends and maps errors."""
