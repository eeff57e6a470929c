"""The unified-diff text of a file added or removed whole, as git writes it: the hunk and the
quoted name of its header. A sweep writes every file it reads so, and the second look at a
binary section writes the text it finds. Pure.

    >>> added_hunk(b"a\\nb")
    b'@@ -0,0 +1,2 @@\\n+a\\n+b\\n\\\\ No newline at end of file\\n'
    >>> quoted(b"b/my file.py"), quoted(b'b/say "hi".txt')
    (b'b/my file.py', b'"b/say \\\\"hi\\\\".txt"')
"""

from __future__ import annotations


def added_hunk(data: bytes) -> bytes:
    """The unified-diff hunk that adds ``data`` whole (empty bytes for an empty file)."""
    return _whole(data, b"+", b"@@ -0,0 +1,%d @@\n")


def removed_hunk(data: bytes) -> bytes:
    """The unified-diff hunk that removes ``data`` whole (empty bytes for an empty file)."""
    return _whole(data, b"-", b"@@ -1,%d +0,0 @@\n")


def _whole(data: bytes, sign: bytes, header: bytes) -> bytes:
    if not data:
        return b""
    lines = data.split(b"\n")
    ends_open = lines[-1] != b""
    if not ends_open:
        lines.pop()
    body = b"".join(sign + line + b"\n" for line in lines)
    if ends_open:
        body += b"\\ No newline at end of file\n"
    return header % len(lines) + body


_PLAIN = set(range(0x21, 0x7F)) - {ord('"'), ord("\\")}
_ESCAPED = {ord("\n"): b"\\n", ord("\t"): b"\\t", ord('"'): b'\\"', ord("\\"): b"\\\\"}


def quoted(name: bytes) -> bytes:
    """``name`` as git writes it in a diff header: C-quoted when it holds anything unusual (a
    quote, a backslash, a control or non-ASCII byte, a space at either end)."""
    inner = name.strip(b" ")
    if all(b in _PLAIN or b == 0x20 for b in name) and inner == name:
        return name
    out = bytearray(b'"')
    for byte in name:
        if byte in _PLAIN or byte == 0x20:
            out.append(byte)
        else:
            out += _ESCAPED.get(byte, b"\\%03o" % byte)
    return bytes(out + b'"')


__all__ = ["added_hunk", "quoted", "removed_hunk"]
