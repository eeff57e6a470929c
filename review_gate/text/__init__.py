"""Text from outside, handled safely: untrusted text escaped for a sink (``escape``), a user's
regular expressions compiled with RE2 (``regex``) and gitignore-style globs (``globs``). Pure
helpers that import nothing else of review-gate, so every layer may use them."""
