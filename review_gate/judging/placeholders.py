"""Whether a secret rule's match holds a placeholder rather than a secret. Pure.

Modelled on gitleaks' allow lists and stop words: a value is a placeholder when it is a template
(``${DB_PASSWORD}``, ``<your-key>``), masked (``xxxx``, ``****``), too short, made of dictionary
or sample words (``password``, ``pass pass``, ``a secret``, ``p@ssword``), a plain word, a word
and a trivial number (``admin123``), or of too little entropy; and when it says so once
percent- or base64-decoded (a Kubernetes Secret whose value decodes to ``password``). A URL
whose host is a reserved example name (RFC 2606 and 6761: ``example.com``, ``.test``,
``.invalid``, ``.localhost``) is documentation, as is a comment line. Real key shapes (AKIA...,
ghp_..., a PEM block) are never judged by those checks: their rules set no ``placeholders``. Only
the keys a vendor documents as examples (AWS's ``...EXAMPLE`` key ids and ``...EXAMPLEKEY``
secrets, gitleaks' allow list) are placeholders for every secret rule (``documented_example``).

>>> placeholder("p%40ssword"), placeholder("Xk9mP2vLq7wZ")
('sample words', None)
>>> documented_example("AKIA" "IOSFODNN7EXAMPLE"), documented_example("AKIA" "Q7WZ3M9K2R5T8XB4")
(True, False)
>>> reserved_host("db.example.org"), reserved_host("db.internal")
(True, False)
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from functools import lru_cache
from urllib.parse import unquote

# Words that make up sample credentials; a value whose letters are only these is a placeholder.
SAMPLE_WORDS = frozenset((
    "a", "an", "the", "my", "your", "our", "their", "me", "mine", "here", "there", "this", "that", "some", "any",
    "new", "old", "of", "for", "to", "in", "on", "it", "is", "be", "password", "passwd", "passphrase", "pass",
    "pwd", "pw", "secret", "secrets", "key", "keys", "token", "tokens", "apikey", "api", "auth", "credential",
    "credentials", "login", "changeme", "change", "changeit", "replace", "replaceme", "insert", "enter", "put",
    "fill", "set", "value", "values", "example", "examples", "sample", "samples", "test", "tests", "testing",
    "tester", "dummy", "fake", "mock", "foo", "bar", "baz", "qux", "quux", "corge", "hello", "world", "user",
    "users", "username", "usr", "admin", "administrator", "root", "guest", "demo", "default", "placeholder",
    "letmein", "welcome", "qwerty", "asdf", "abc", "abcd", "xyz", "none", "null", "nil", "empty", "todo", "fixme",
    "redacted", "hidden", "masked", "private", "public", "local", "localhost", "dev", "development", "prod",
    "production", "staging", "stage", "db", "database", "mysql", "postgres", "postgresql", "sql", "redis", "mongo",
    "mongodb", "rabbit", "rabbitmq", "secure", "insecure", "simple", "strong", "weak", "super", "top", "very",
    "long", "short", "one", "two", "three", "my_password", "your_password", "mysecret", "yoursecret",
))
_LEET = str.maketrans({"@": "a", "4": "a", "3": "e", "1": "i", "!": "i", "0": "o", "5": "s", "$": "s", "7": "t"})
_TEMPLATE = re.compile(r"\$\{|\{\{|\$\(|<[^<>]*>|%\(|%[A-Za-z_]+%|^\$[A-Za-z_]|^\{[A-Za-z_]\w*\}$")
_MASKED = re.compile(r"^(?:[xX*#._-]{3,}|(.)\1{3,})$")
_TRIVIAL_NUMBER = re.compile(r"^[A-Za-z]+(?:1|12|123|1234|12345|123456|01|0|00|000|007|2)?$")
_NOT_LETTER = re.compile(r"[^a-z]+")
_BASE64 = re.compile(r"^[A-Za-z0-9+/_-]{4,}={0,2}$")
# The keys AWS's documentation uses (an access key id ending in EXAMPLE, a secret ending in
# EXAMPLEKEY): in docs, tests and SDK fixtures everywhere, never a live credential.
_DOCUMENTED = re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{9}EXAMPLE\b"
                         r"|(?:^|[^A-Za-z0-9/+])[A-Za-z0-9/+]{30}EXAMPLEKEY\b")
RESERVED_DOMAINS = ("example.com", "example.net", "example.org", "example", "test", "invalid", "localhost")


def reserved_host(host: str) -> bool:
    """RFC 2606 / 6761 names: example.com/.net/.org and their subdomains, .example, .test, .invalid,
    localhost and .localhost."""
    name = host.lower().rstrip(".")
    return any(name == domain or name.endswith("." + domain) for domain in RESERVED_DOMAINS)


def documented_example(match: str) -> bool:
    """Whether a secret rule's ``match`` holds a key a vendor documents as an example (AWS's)."""
    return _DOCUMENTED.search(match) is not None


def entropy(text: str) -> float:
    """Shannon entropy of ``text`` in bits a character."""
    if not text:
        return 0.0
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


@lru_cache(maxsize=4096)
def _words(letters: str) -> bool:
    """Whether ``letters`` (lower case) splits into SAMPLE_WORDS."""
    if not letters:
        return False
    reachable = [True] + [False] * len(letters)
    for end in range(1, len(letters) + 1):
        reachable[end] = any(reachable[start] and letters[start:end] in SAMPLE_WORDS
                             for start in range(max(0, end - 16), end))
    return reachable[-1]


def decoded(value: str) -> list[str]:
    """``value`` and what it says percent-decoded and base64-decoded (when that is printable text)."""
    found = [value]
    if "%" in value:
        found.append(unquote(value))
    if _BASE64.match(value) and len(value) % 4 in (0, 2, 3):
        try:
            raw = base64.b64decode(value + "=" * (-len(value) % 4), altchars=b"-_" if "-" in value or "_" in value
                                   else None, validate=True)
            text = raw.decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            text = ""
        if text and text.isprintable() and sum(c.isalnum() for c in text) * 2 >= len(text):
            found.append(text)
    return found


def placeholder(value: str, *, min_length: int = 6, min_entropy: float | None = None) -> str | None:
    """Why ``value`` is a placeholder (a short reason), or None when it may be a real secret."""
    value = value.strip().strip("\"'`")
    for text in decoded(value):
        reason = _judge(text, min_length, min_entropy)
        if reason is not None:
            return reason
    return None


def _judge(text: str, min_length: int, min_entropy: float | None) -> str | None:
    if _TEMPLATE.search(text):
        return "a template"
    if _MASKED.match(text):
        return "masked"
    if sum(c.isalnum() for c in text) < min_length:
        return "too short"
    bare = text.strip(" .,;:!?")
    if _TRIVIAL_NUMBER.match(bare) and len(bare) <= 20 and sum(c.isupper() for c in bare) <= 2:
        return "a word"  # storageos, Password1, admin123: a word and a trivial number at most
    lower = text.lower()
    if _words(_NOT_LETTER.sub("", lower)) or _words(_NOT_LETTER.sub("", lower.translate(_LEET))):
        return "sample words"
    if min_entropy is not None and entropy(text) < min_entropy:
        return "low entropy"
    return None


_COMMENT = re.compile(r"^\s*(?:#|//|/\*|\*|--|;|<!--|%|REM\b|rem\b)")


def comment_line(line: str) -> bool:
    """Whether ``line`` is a comment in the usual languages (``#``, ``//``, ``/*``, ``*``, ``--``, ``;``)."""
    return bool(_COMMENT.match(line))
