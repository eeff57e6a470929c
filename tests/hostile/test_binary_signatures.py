"""A file that starts with a binary format's signature is binary, however much text its metadata
holds; the text inside it is still read by the secret rules, and never sent to a reviewer.

The case that found it: a real PNG whose first 8 KB are an XMP packet (docs/logos/apple_logo.png
in pydantic v2.0) was read as lines of text and sent to every reviewer. Each test drives the real
CLI in a real repository; the LLM test reviews against the real test server."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest

from review_gate.change import binary_formats, text_or_binary
from tests.conftest import GitRepo
from tests.llm.conftest import llm_agent, write_config
from tests.llm.server import LlmServer

KEY = "AKIAIOSFODNN7EXAMPLQ"  # the shape of an AWS access key id: sec-aws-key-01, critical
XMP_WORD = "photoshop:CreatorTool"


def chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_with_xmp(text_chunk: bytes = b"", xmp: bool = True) -> bytes:
    """A PNG whose first 8000 bytes are mostly an XMP packet, as image editors write it."""
    packet = ('<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/">'
              + "".join(f'<rdf:Description {XMP_WORD}="Adobe Photoshop {i}" xmp:Rating="{i}"/>\n'
                        for i in range(150)) + "</x:xmpmeta><?xpacket end=\"w\"?>").encode()
    header = struct.pack(">IIBBBBB", 16, 16, 8, 6, 0, 0, 0)
    pixels = zlib.compress(b"\x00" + b"\xff\x00\x00\xff" * 16 * 16)
    metadata = chunk(b"iTXt", b"XML:com.adobe.xmp\x00\x00\x00\x00\x00" + packet) if xmp else b""
    text = chunk(b"tEXt", text_chunk) if text_chunk else b""
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + metadata + text + chunk(b"IDAT", pixels)
            + chunk(b"IEND", b""))


def review(cli: Any, repo: GitRepo, *extra: str) -> dict[str, Any]:
    result = cli("--base", "HEAD~1", "--head", "HEAD", "--no-state", "--format", "json", *extra)
    assert result.out, result.err
    data: dict[str, Any] = json.loads(result.out)
    return data


def test_the_metadata_of_the_test_image_reads_as_text_to_the_old_test() -> None:
    """The image is the case: its first 8000 bytes pass the printable-text test on their own."""
    probe = png_with_xmp()[:text_or_binary.BINARY_PROBE]
    assert text_or_binary.is_binary(probe) and text_or_binary._mostly_text(probe)


def test_an_image_whose_metadata_looks_like_text_is_binary(cli: Any, repo: GitRepo) -> None:
    repo.write("docs/logo.png", png_with_xmp())
    repo.commit("logo")
    report = review(cli, repo, "--offline")
    unread = {item["path"]: item for item in report["coverage"]["not_inspected"]}
    assert unread["docs/logo.png"]["kind"] == "binary"
    assert not [f for f in report["findings"] if f["file"] == "docs/logo.png"]


@pytest.mark.parametrize("xmp", [True, False])
def test_a_key_in_an_image_text_chunk_is_found_by_the_secret_rules(cli: Any, repo: GitRepo, xmp: bool) -> None:
    """Without the XMP packet the image was binary before too, and its key was never read."""
    repo.write("docs/logo.png", png_with_xmp(b"Comment\x00aws_access_key_id=" + KEY.encode(), xmp=xmp))
    repo.commit("logo with a key")
    report = review(cli, repo, "--offline")
    keys = [f for f in report["findings"] if f["rule_id"] == "sec-aws-key-01"]
    assert [(f["file"], f["line"]) for f in keys] == [("docs/logo.png", None)]
    assert KEY not in keys[0]["message"]  # quoted redacted, as on a line
    assert report["decision"] == "fail"


def test_an_llm_reviewer_is_not_sent_the_image(cli: Any, repo: GitRepo, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    repo.write("docs/logo.png", png_with_xmp(b"Comment\x00hello"))
    repo.write("app.py", "x = 1\n")
    repo.commit("logo and code")
    monkeypatch.setenv("TEST_LLM_KEY", "sk-test")
    with LlmServer() as server:
        cfg = write_config(tmp_path, [llm_agent("reviewer", server)])
        report = review(cli, repo, "--config", str(cfg))
        prompts = [json.dumps(r.body) for r in server.requests]
    assert prompts, report["agents"]  # the reviewer was asked about app.py
    assert not any(XMP_WORD in p or "x:xmpmeta" in p for p in prompts)
    assert "docs/logo.png" in {item["path"] for item in report["coverage"]["not_inspected"]}


@pytest.mark.parametrize(("head", "kind"), [
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "png"), (b"\xff\xd8\xff\xe0\x00\x10JFIF", "jpeg"),
    (b"GIF89a\x10\x00", "gif"), (b"RIFF\x24\x00\x00\x00WEBPVP8 ", "webp"), (b"%PDF-1.7\n%\xe2\xe3", "pdf"),
    (b"PK\x03\x04\x14\x00", "zip"), (b"\x1f\x8b\x08\x00", "gzip"), (b"\x7fELF\x02\x01", "elf"),
    (b"\xcf\xfa\xed\xfe\x07\x00", "mach-o"), (b"SQLite format 3\x00", "sqlite"),
    (b"\xca\xfe\xba\xbe\x00\x00\x00\x34", "java class or mach-o"), (b"\x00asm\x01\x00\x00\x00", "wasm"),
    (b"\x00\x01\x00\x00\x00\x0a\x00\x80\x00\x03", "truetype"), (b"OTTO\x00\x0a\x00\x80\x00\x03", "opentype"),
    (b"wOFF\x00\x01\x00\x00", "woff"), (b"wOF2OTTO", "woff2"),
])
def test_each_signature_is_binary_whatever_follows(head: bytes, kind: str) -> None:
    data = head + b"\x00" + b"metadata that reads as text " * 300
    assert binary_formats.signature(data) == kind
    assert text_or_binary.readable(data) is None


def test_a_windows_executable_is_binary_by_its_pe_header() -> None:
    data = bytearray(b"MZ" + b"\x00" * 200)
    data[0x3C:0x40] = struct.pack("<I", 0x80)
    data[0x80:0x84] = b"PE\x00\x00"
    assert binary_formats.signature(bytes(data)) == "pe"


@pytest.mark.parametrize("source", [
    b"MZ = 1\x00\nprint(MZ)\n", b"true && echo ok\x00\n", b"RIFF = 'x'\x00\n", b"OTTO = 2\x00\n",
    b"wOFF = 3  # a stray NUL\x00\n", b"%PDF is a word\x00 here\n",
])
def test_source_that_starts_like_a_signature_keeps_the_stray_nul_rule(source: bytes) -> None:
    """A word at the start of a file is no signature: text with a stray NUL is still text."""
    assert binary_formats.signature(source) is None
    assert text_or_binary.readable(source) == source


def test_the_text_inside_a_binary_is_bounded() -> None:
    text = binary_formats.text_inside(b"\x00".join([b"A" * 100] * 20_000))
    assert len(text) == binary_formats.MAX_TEXT


def test_a_sweep_reads_the_text_inside_an_image_with_the_secret_rules(cli: Any, repo: GitRepo) -> None:
    repo.write("docs/logo.png", png_with_xmp(b"Comment\x00aws_access_key_id=" + KEY.encode()))
    repo.commit("logo with a key")
    result = cli("sweep", "--offline", "--no-state", "--format", "json")
    report = json.loads(result.out)
    assert [(f["file"], f["line"]) for f in report["findings"] if f["rule_id"] == "sec-aws-key-01"] == [
        ("docs/logo.png", None)]
    assert {item["path"]: item["kind"] for item in report["coverage"]["not_inspected"]} == {"docs/logo.png": "binary"}
