"""What a shell line may write into a file, as texts an inline waiver is looked for in. Read,
never run.

A waiver need not be on the line as written: bash joins adjacent quoted pieces into one word
(``"# revie""w-gate: ignore[x]"``), decodes ``$'...'`` and escapes; sed and perl write the
replacement of a substitution with its escapes undone (``s/x/x \\/\\/ eslint-disable-line/``
writes ``x // eslint-disable-line``); printf joins its arguments. So the texts are the line as
written and, for each simple command (in substitutions and here-documents' lines too), its words
as bash makes them, joined by spaces and joined without, each word with its backslashes undone,
and the replacement of each word that reads as a sed or perl substitution; with the variables
assigned earlier on the line filled in (``X=nos; echo "# ${X}ec"``, ``hooks.variables``) and with
printf's and ``echo -e``'s escapes decoded and printf's format applied (``printf '# n\\157sec
B%d' 501``, ``hooks.escapes``).

``edited`` goes further for ``sed -i`` and ``perl -i``: the substitution is applied to each file
it edits (``hooks.substitution``), so a waiver it completes from the text around it (``s/X//``
on ``# nosXec``) is seen in what the file will hold. What a program does that is not on the line
(``tr``, ``base64 -d``, a script the agent runs) is not seen.

    >>> any("review-gate: ignore[x]" in t for t in texts('echo "# revie""w-gate: ignore[x] y" >> f.py'))
    True
    >>> "loads(blob)  # nosec" in texts("sed -i 's/loads(blob)/loads(blob)  # nosec/' f.py")
    True
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path, PurePath

from review_gate.surfaces.hooks import edited as files
from review_gate.surfaces.hooks import escapes, programs, script, substitution, syntax, variables

MAX_TEXTS = 2000  # words looked at, at most: past them, the line as written (a line that long is rare)

_ESCAPE = re.compile(r"\\(.)", re.S)
# s, then a delimiter that is neither a word character nor a blank: sed's and perl's substitution
_SUBSTITUTION = re.compile(r"(?:^|[;{\s])s([^\w\s\\])")


def texts(command: str, cwd: Path | None = None) -> list[str]:
    """The texts ``command`` may write into a file (see the module): the line first when it
    cannot be read for sure. A command that writes no file (``grep``, ``git log -S``, ``git
    commit -m``, an ``echo`` not redirected or piped into a writer) gives none; a ``sed -i`` or
    ``perl -i`` gives only the replacements of its substitutions, and nothing when ``edited``
    computes them against the files it edits (in ``cwd``)."""
    parsed = syntax.read(command)
    if parsed is None or parsed.broken or _unread(parsed.items):
        found = [command, _unescaped(command)]
        if parsed is None:
            return found
    else:
        found = []
    listed = list(_commands(parsed.items))
    loud = False
    for (_, writes), expanded in zip(listed, variables.expanded([words for words, _ in listed]), strict=True):
        if writes is False:
            continue
        loud = True
        in_place = _in_place(expanded)
        if in_place is not None:
            found += _in_place_texts(expanded, in_place, cwd)
            continue
        found += [" ".join(expanded), "".join(expanded)]
        for word in expanded:
            found += [_unescaped(word), escapes.decoded(word), *substitutions(word)]
        name = PurePath(expanded[0]).name if expanded else ""
        if name == "printf":
            found.append(escapes.printf(expanded[1:]))
        elif name == "echo":
            found.append(escapes.echo_e(expanded[1:]))
        if len(found) > MAX_TEXTS:
            break
    if loud:  # a here-document feeds one of the commands that write
        found += [*parsed.bodies, *_bodies(parsed.items)]
    return list(dict.fromkeys(found))


_QUIET_GIT = frozenset({"grep", "log", "show", "diff", "status", "blame", "shortlog", "commit", "rev-parse",
                        "ls-files", "reflog", "add", "push", "fetch"})
_NOWHERE = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})


def _quiet(command: script.Command) -> bool:
    """Whether a simple command writes no file of the repository: no redirection into a file,
    and a program that only reads (``grep``, ``cat``, ``echo``) or a git command that writes
    no file of the work tree (``git grep``, ``git log``, ``git commit -m``)."""
    if any(target not in _NOWHERE for target in command.writes):
        return False
    name = programs.program(command.words)
    if not name or name in programs.READERS:
        return True
    if name != "git":
        return False
    rest = list(command.words[command.words.index("git") + 1:]) if "git" in command.words else []
    while rest and rest[0].startswith("-"):
        rest = rest[2:] if rest[0] in ("-C", "-c") else rest[1:]
    return bool(rest) and rest[0] in _QUIET_GIT


def _commands(items: Sequence[script.Item], loud: bool = False) -> list[tuple[tuple[str, ...], bool]]:
    """Each simple command's words in line order, and whether it may write a file: every
    element of a pipeline may when one does (``echo '# nosec' | tee -a f``), and what a
    redirection follows (the grammar gives it as a command without words: ``echo x >> f``,
    ``{ echo x; } > f``) writes its output."""
    out: list[tuple[tuple[str, ...], bool]] = []
    previous = 0  # where the previous item's commands start in ``out``
    for item in items:
        start = len(out)
        if isinstance(item, script.Command) and not item.words:
            if not _quiet(item):
                out[previous:] = [(words, True) for words, _ in out[previous:]]
            continue
        if isinstance(item, script.Command):
            out.append((item.words, loud or not _quiet(item)))
        elif isinstance(item, script.Scope) and item.piped:
            inner = _commands(item.items, loud)
            louder = any(writes for _, writes in inner)
            out += [(words, writes or louder) for words, writes in inner]
        elif isinstance(item, script.Scope):
            out += _commands(item.items, loud)
        elif isinstance(item, script.Function):
            out += _commands(item.body, loud)
        previous = start
    return out


def _bodies(items: Sequence[script.Item]) -> Iterator[str]:
    for item in items:
        if isinstance(item, script.Scope):
            yield from item.bodies
            yield from _bodies(item.items)
        elif isinstance(item, script.Function):
            yield from _bodies(item.body)


def _unread(items: Sequence[script.Item]) -> bool:
    for item in items:
        if isinstance(item, script.Unread):
            return True
        if isinstance(item, script.Scope) and _unread(item.items):
            return True
        if isinstance(item, script.Function) and _unread(item.body):
            return True
    return False


def _in_place_texts(words: Sequence[str], found: tuple[str, list[str], list[str], bool],
                    cwd: Path | None) -> list[str]:
    """What a ``sed -i``/``perl -i`` writes as far as the line shows: nothing when each of its
    scripts is computed and each file it edits is there (``edited`` compares the result with
    the file), the replacements of its substitutions (never the pattern side) when its
    scripts are computed, and all its words when they are not."""
    program, scripts, targets, extended = found
    certain = bool(scripts) and all(substitution.script(program, text, extended=extended)[1] for text in scripts)
    if not certain:
        return [" ".join(words), *(escapes.decoded(word) for word in words), *(_unescaped(word) for word in words)]
    if cwd is not None and targets and all(os.path.isfile(os.path.join(cwd, t)) for t in targets):
        return []
    return [text for script_text in scripts for text in substitutions(script_text)]


_OVERWRITE = re.compile(
    r"\A\s*cat\s+(?:>\s*(?P<a>[\w./-]+)\s+<<\s*(?P<q>['\"])(?P<d>\w+)(?P=q)"
    r"|<<\s*(?P<q2>['\"])(?P<d2>\w+)(?P=q2)\s+>\s*(?P<b>[\w./-]+))[ \t]*\n(?P<body>.*?\n)?"
    r"(?P=d)?(?P=d2)?\n?\s*\Z", re.S)


def overwrite(command: str) -> tuple[str, str] | None:
    """(file, text) when the whole line is ``cat > FILE <<'EOF'`` with a here-document that
    expands nothing: it replaces the file with the text, which is then compared with the file
    as it is, as a Write is (rewriting a file that keeps its waivers adds none)."""
    match = _OVERWRITE.match(command)
    if match is None:
        return None
    body = match.group("body") or ""
    if (match.group("d") or match.group("d2")) in body.splitlines():
        return None  # the here-document ends there: what follows runs as commands
    return match.group("a") or match.group("b"), body


def edited(command: str, cwd: Path, root: Path | None) -> Iterator[tuple[str, str | None]]:
    """For each file a ``sed -i``/``perl -i`` substitution on the line edits (a regular file
    inside ``root``): (what it will hold, what it holds). A substitution that cannot be computed
    (``hooks.substitution``), on a file that has a line near a waiver (after a comment opener, a
    marker one character away: ``# nosXec``), gives (that line, None): the caller fails closed,
    since the substitution may complete it. A file that cannot be read is
    left to ``texts``."""
    parsed = syntax.read(command)
    if parsed is None:
        return
    for words in variables.expanded(list(_words(parsed.items))):
        found = _in_place(words)
        if found is None:
            continue
        program, scripts, targets, extended = found
        subs: list[substitution.Substitution] = []
        known = bool(scripts)
        for text in scripts:
            more, certain = substitution.script(program, text, extended=extended)
            subs += more
            known &= certain
        for target in targets:
            if not os.path.isfile(os.path.join(cwd, target)):
                continue
            before = files.current(target, cwd, root)
            if before is None:  # outside the repository, or too large: what the script itself holds
                if (line := _near("\n".join(scripts))) is not None:
                    yield f"{line.strip()[:120]} (a substitution on a file the hook cannot read)", None
                continue
            after = substitution.applied(before, subs) if known else None
            if after is not None:
                yield after, before
            elif (line := _near(before)) is not None:
                yield f"{line.strip()[:120]} (a substitution the hook cannot read, on a line near a waiver)", None


def _in_place(words: Sequence[str]) -> tuple[str, list[str], list[str], bool] | None:
    """sed's or perl's scripts and files when it edits in place: (program, scripts, files, ERE)."""
    name = PurePath(words[0]).name if words else ""
    if name not in ("sed", "gsed", "perl"):
        return None
    program = "perl" if name == "perl" else "sed"
    scripts: list[str] = []
    operands: list[str] = []
    in_place = extended = False
    index = 1
    while index < len(words):
        word = words[index]
        index += 1
        if word == "--":
            operands += words[index:]
            break
        if word.startswith("--"):
            in_place |= word.startswith("--in-place")
            extended |= word == "--regexp-extended"
            if word in ("--expression", "--file"):
                scripts.append(words[index] if word == "--expression" and index < len(words) else _UNREAD)
                index += 1
            elif word.startswith(("--expression=", "--file=")):
                scripts.append(word.partition("=")[2] if word.startswith("--expression=") else _UNREAD)
            continue
        if not word.startswith("-") or word == "-":
            operands.append(word)
            continue
        for position, flag in enumerate(word[1:], 1):
            if flag == "i":
                in_place = True
                break  # the rest is the backup's suffix
            if flag == ("0" if program == "perl" else "z"):
                scripts.append(_UNREAD)  # records that are not lines: not computed
            if flag in "Er" and program == "sed":
                extended = True
            elif flag in "eEf" and not (program == "perl" and flag == "f"):
                rest = word[position + 1:]
                value = rest or (words[index] if index < len(words) else "")
                index += 0 if rest else 1
                scripts.append(value if flag != "f" else _UNREAD)  # a script file: not read
                break
    if not in_place:
        return None
    if not scripts and operands:
        scripts, operands = operands[:1], operands[1:]
    return program, scripts, operands, extended


_UNREAD = "\0"  # a script that is not on the line (sed -f FILE), or a mode not computed: not read

def _near_pattern(marker: str) -> str:
    """``marker``, or it with one character inserted or changed (``nosXec``, ``nosex``)."""
    spellings = {re.escape(marker)}
    for index in range(len(marker) + 1):
        spellings.add(re.escape(marker[:index]) + "." + re.escape(marker[index:]))
        if index < len(marker):
            spellings.add(re.escape(marker[:index]) + "." + re.escape(marker[index + 1:]))
    return "|".join(sorted(spellings, key=len, reverse=True))


# a comment opener (# // /* --), then on the same line a marker one character away from a waiver's
_NEAR = re.compile(r"(?:#|//|/\*|--)[^\n]*?(?:"
                   + "|".join(_near_pattern(m) for m in ("review-gate", "noqa", "nosec", "eslint-disable",
                                                          "zizmor", "nosemgrep")) + ")", re.I)


def _near(text: str) -> str | None:
    """A line of ``text`` that holds, after a comment opener, a waiver marker or one spelt one
    character away from it (``# nosXec``, ``# nosex``): a substitution the hook cannot compute
    may complete it."""
    for line in text.splitlines():
        if _NEAR.search(line):
            return line
    return None


def substitutions(word: str) -> list[str]:
    """The replacements of the sed or perl substitutions in ``word``, escapes undone.

    >>> substitutions(r"s/a()/a() \\/\\/ eslint-disable-line/g")
    ['a() // eslint-disable-line']
    >>> substitutions("s|x|x # nosec B501|")
    ['x # nosec B501']
    """
    out = []
    for match in _SUBSTITUTION.finditer(word):
        delimiter = match.group(1)
        parts = substitution.split(word[match.end():], delimiter)
        if len(parts) >= 2:
            out.append(escapes.replacement(parts[1]))
    return out


def _unescaped(text: str) -> str:
    return _ESCAPE.sub(r"\1", text)


def _words(items: Sequence[script.Item]) -> Iterator[tuple[str, ...]]:
    """The words of every simple command in ``items``, nested lines and function bodies too."""
    for item in items:
        if isinstance(item, script.Command):
            yield item.words
        elif isinstance(item, script.Scope):
            yield from _words(item.items)
        elif isinstance(item, script.Function):
            yield from _words(item.body)
