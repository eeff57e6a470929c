"""A parsed diff holds about its own size, not a copy of every line beside it (a 50 MB diff once
took 1.3 GB: each line was an object, a string and a second copy in the file's patch). Counted
with tracemalloc: allocations, not time, so the test is exact on any machine."""

from __future__ import annotations

import tracemalloc

from review_gate.change.diff_parser import parse_diff, parse_stream


def big_diff(files: int = 400, lines: int = 120) -> bytes:
    out = []
    for f in range(files):
        out.append(f"diff --git a/src/m{f}.py b/src/m{f}.py\nindex 1111111..2222222 100644\n"
                   f"--- a/src/m{f}.py\n+++ b/src/m{f}.py\n@@ -1,{lines} +1,{lines} @@\n")
        for i in range(lines):
            out.append(f" def keep_{f}_{i}(value): return value * {i}\n" if i % 3 else
                       f"-    old_{f}_{i} = compute({i}, 'before')\n+    new_{f}_{i} = compute({i}, 'after')\n")
    return "".join(out).encode()


def held(function, data):  # type: ignore[no-untyped-def]
    tracemalloc.start()
    try:
        files = function(data)
        size, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return files, size


def test_a_parsed_diff_holds_about_its_own_size() -> None:
    data = big_diff()
    files, size = held(parse_diff, data)
    assert len(files) == 400 and sum(f.added for f in files) == 400 * 40
    assert size < 2 * len(data), f"{size / len(data):.1f} bytes held a byte of diff"


def test_a_streamed_diff_is_never_held_whole() -> None:
    data = big_diff()
    pieces = [data[i:i + 65536] for i in range(0, len(data), 65536)]
    tracemalloc.start()
    try:
        files = parse_stream(iter(pieces))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [f.patch for f in files] == [f.patch for f in parse_diff(data)]
    assert peak < 3 * len(data), f"peak {peak / len(data):.1f} bytes a byte of diff"


def test_lines_are_read_from_the_patch_as_before() -> None:
    data = big_diff(files=2, lines=6)
    change = parse_diff(data)[0]
    assert [(ln.number, ln.text, ln.added) for ln in change.hunks[0].lines][:3] == [
        (1, "    new_0_0 = compute(0, 'after')", True), (2, "def keep_0_1(value): return value * 1", False),
        (3, "def keep_0_2(value): return value * 2", False)]
    assert [(r.number, r.text, r.before) for r in change.hunks[0].removed_lines] == [
        (1, "    old_0_0 = compute(0, 'before')", 0), (4, "    old_0_3 = compute(3, 'before')", 3)]


def test_inline_waivers_read_only_the_lines_findings_are_on() -> None:
    """The inline-waiver pass once made every line of the diff an object in one dict (the 50 MB
    diff's review peaked at 500 MB again); it reads a finding's line, and the one above, when asked."""
    from review_gate.judging.waivers import apply
    from review_gate.models import Finding, PRFacts

    data = big_diff()
    facts = PRFacts(source="x", files=parse_diff(data))
    findings = [Finding(fingerprint=f"{i:032x}", agent="a", rule_id="r", severity="warning", category="c",
                        file=f"src/m{i}.py", line=5, message="m") for i in range(0, 400, 40)]
    tracemalloc.start()
    try:
        applied = apply(findings, facts, [], ["a"], "honour")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(applied.kept) == len(findings)
    assert peak < len(data) / 4, f"peak {peak / len(data):.2f} bytes a byte of diff"


def test_removed_texts_and_truth_say_what_the_removed_lines_say() -> None:
    diff = (b"diff --git a/a.txt b/a.txt\nindex 1111111..2222222 100644\n--- a/a.txt\n+++ b/a.txt\n"
            b"@@ -1,3 +1,3 @@\n-gone\r\n+new\r\n keep\r\n--- looks like a header\n+-starts with a dash\n"
            b"@@ -10,2 +10,4 @@\n ctx\n+added\n+\xff raw\n ctx2\n"
            b"@@ -20 +20 @@\n-\n+x\n")
    hunks = parse_diff(diff)[0].hunks
    for hunk in hunks:
        assert hunk.removed_lines.texts() == [r.text for r in hunk.removed_lines]
        assert bool(hunk.removed_lines) == bool(list(hunk.removed_lines))
    assert [h.removed_lines.texts() for h in hunks] == [["gone", "-- looks like a header"], [], [""]]


def test_a_hunks_texts_are_its_lines_texts() -> None:
    # Lines.texts() reads a new file's lines by splitting its body on the tags, the others row by row
    diff = (b"diff --git a/n.py b/n.py\nnew file mode 100644\n--- /dev/null\n+++ b/n.py\n@@ -0,0 +1,4 @@\n"
            b"+a\n++b starts with a plus\n+\n+-c\n"
            b"diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1,3 +1,3 @@\n keep\n-old\n+new\r\n ctx\n")
    for change in parse_diff(diff):
        for hunk in change.hunks:
            assert hunk.lines.texts() == [line.text for line in hunk.lines]
    assert parse_diff(diff)[0].hunks[0].lines.texts() == ["a", "+b starts with a plus", "", "-c"]
