"""The commands of a shell line as tree-sitter's bash grammar reads them: the words of each, the
files its redirections write, and the command lines nested in it. Read, never run; what the
commands do is ``hooks.shell``'s judgement.

A line becomes a ``Script``: a list of items in the order bash meets them.

- ``Command``: one simple command's words, quotes removed and escapes decoded as bash decodes
  them (``$'\\x70ush'`` is ``push``, ``pu"sh"`` is ``push``, ``g\\it`` is ``git``); an
  assignment before it (or alone, or given to ``export``...) is one word ``NAME=VALUE``. An
  expansion stays as written (``$X``, ``${X}``, ``$((1+1))``), so the judgement sees that the
  word is not literal; a substitution is the word ``UNKNOWN`` (``HERE`` for ``$(pwd)``,
  ``$PWD``; ``TOP`` for ``$(git rev-parse --show-toplevel)``). ``writes``: the files its
  redirections write (``>``, ``>>``, ``&>``, ``>|``, ``<>``, ``>&`` to a file).
- ``Scope``: commands whose ``cd`` stays inside: a subshell ``( )`` and, ``nested``, the
  command line of a substitution (``$( )``, backticks, ``<( )``, ``>( )``), wherever it is: in
  double quotes, in an expansion's default, in a ``[[ ]]`` test, in a ``for`` list, in a
  here-document that expands (``<<EOF``, not ``<<'EOF'``), in a ``case`` pattern. A pipeline's
  elements are not scopes, though bash runs each in a subshell: the grammar groups a list
  before a redirection into the element (``cd x && make 2>&1 | tee log`` puts the ``cd`` in the
  pipeline), so their ``cd`` is followed, which fails closed.
- ``Function``: a function's body, by name (it runs where the function is called).
- ``Comment``, and ``Unread``: the text of a part the grammar reported as an error.

``if``/``while``/``until``/``for``/``select``/``case`` bodies, ``{ }`` groups, ``&&``/``||``
lists, ``!`` and ``time`` are read through to the commands in them. Here-document bodies are
kept apart (``Script.bodies``): whether they are data or a script is the judgement's call.
``Script.text`` is the line without comments or here-document bodies and with each ``$'...'``
decoded: what the loose reading searches.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from review_gate.surfaces.hooks import bash_grammar, quoting
from review_gate.surfaces.hooks.script import (
    HERE,
    TOP,
    UNKNOWN,
    Command,
    Comment,
    Function,
    Item,
    Scope,
    Script,
    Unread,
)

if TYPE_CHECKING:
    from tree_sitter import Node

MAX_NESTING = 100  # levels of the tree walked; a part nested deeper is Unread (Python's stack is the bound)


def read(text: str, level: int = 0) -> Script | None:
    """The commands of the shell line ``text``; None when it cannot be parsed (no grammar, or
    the parse ran out of time). ``level``: how deep in another line's tree it is (a part read
    again on its own), which counts toward ``MAX_NESTING``."""
    parsed = bash_grammar.parse(text) if level <= MAX_NESTING else None
    return _Walk(*parsed, level).script() if parsed is not None else None


# ------------------------------------------------------------------------------------- words

_WRITES = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&", "&>|"})
_PLAIN = frozenset({"comment", "heredoc_body", "heredoc_end", "ansi_c_string"})  # what Script.text drops or decodes


class _Walk:
    """One line's tree, walked once into items."""

    def __init__(self, source: bytes, root: Node, level: int) -> None:
        self.source = source
        self.root = root
        self.level = level
        self.bodies: list[str] = []
        self.broken = False
        self.substitutions = 0
        # a line with no `#`, `<<` or `$'` has none (most lines): the tree is not walked for them
        self.edits = sorted(self._edits(root)) if any(mark in source for mark in (b"#", b"<<", b"$'")) else []

    def script(self) -> Script:
        items: list[Item] = []
        self.visit(self.root, items, self.level)
        return Script(tuple(items), self.plain(0, len(self.source)), tuple(self.bodies),
                      self.broken or self.root.has_error, self.substitutions)

    # ---------------------------------------------------------------- the plain text

    def _edits(self, root: Node) -> Iterator[tuple[int, int, bytes]]:
        """What Script.text changes: comments and here-document bodies out, $'...' decoded
        (single-quoted). None of these holds another, so the edits never overlap."""
        stack = [root]
        while stack:
            node = stack.pop()
            if node.type in _PLAIN:
                decoded = ""
                if node.type == "ansi_c_string":
                    decoded = quoting.single_quoted(quoting.ansi_c(self.raw(node)[2:-1]))
                yield node.start_byte, node.end_byte, decoded.encode("utf-8", "surrogatepass")
            else:
                stack.extend(node.children)

    def plain(self, start: int, end: int) -> str:
        out: list[bytes] = []
        at = start
        for begin, stop, replacement in self.edits:
            if begin >= start and stop <= end:
                out += [self.source[at:begin], replacement]
                at = stop
        out.append(self.source[at:end])
        return quoting.text(b"".join(out))

    def raw(self, node: Node) -> str:
        return quoting.text(self.source[node.start_byte:node.end_byte])

    # ---------------------------------------------------------------- statements

    def visit(self, node: Node, out: list[Item], level: int) -> None:
        """The items of ``node`` and what it holds, appended to ``out``."""
        if level > MAX_NESTING:
            out.append(Unread(self.plain(node.start_byte, node.end_byte)))
            return
        kind = node.type
        if node.is_missing:
            self.broken = True
        if kind == "ERROR":
            self.broken = True
            out.append(Unread(self.plain(node.start_byte, node.end_byte)))
            self.children(node, out, level)
        elif kind == "command":
            out.append(self.command(node, out, level))
        elif kind in ("variable_assignment", "variable_assignments"):
            assignments = [node] if kind == "variable_assignment" else node.named_children
            out.append(Command(tuple(self.assignment(a, out, level) for a in assignments)))
        elif kind in ("declaration_command", "unset_command"):
            out.append(self.declaration(node, out, level))
        elif kind == "redirected_statement":
            self.redirected(node, out, level)
        elif kind in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
            writes = self.redirect(node, out, level)
            if writes:
                out.append(Command((), tuple(writes)))
        elif kind == "subshell":
            out.append(self.scope(node, level))
        elif kind == "pipeline":
            self.pipeline(node, out, level)
        elif kind == "list":
            for element in self._flat(node):  # `a && b || c`: nested to the left, walked flat
                self.visit(element, out, level + 1)
        elif kind == "function_definition":
            name = node.child_by_field_name("name")
            body: list[Item] = []
            self.children(node, body, level, skip=name)
            out.append(Function(self.raw(name) if name is not None else "", tuple(body)))
        elif kind in ("command_substitution", "process_substitution"):
            self.substitution(node, out, level)
        elif kind == "comment":
            out.append(Comment(self.raw(node)))
        elif kind == "heredoc_body":
            document = self.raw(node)
            self.bodies.append(document)
            if "`" in document and self._expands(node):  # the grammar reads no backticks in a body
                again = read(': "' + document.replace('"', '\\"') + '"', level + 1)  # expanded as in double quotes
                self.merge(again, out, document)
            else:
                self.children(node, out, level)  # substitutions in a body that expands (<<EOF) run
        else:  # program, compound commands, tests, arithmetic, words: what they hold
            self.children(node, out, level)

    def children(self, node: Node, out: list[Item], level: int, skip: Node | None = None) -> None:
        for child in node.children:
            if (child.is_named or child.is_missing) and child != skip:
                self.visit(child, out, level + 1)

    def _flat(self, node: Node) -> list[Node]:
        elements: list[Node] = []
        pending = [node]
        while pending:
            current = pending.pop()
            if current.type == "list":
                pending += reversed(current.named_children)
            else:
                elements.append(current)
        return elements

    def scope(self, node: Node, level: int) -> Scope:
        items: list[Item] = []
        self.children(node, items, level)
        return Scope(tuple(items), self.plain(node.start_byte, node.end_byte))

    def substitution(self, node: Node, out: list[Item], level: int) -> None:
        """A command line in a word: read as its own scope, one level deeper."""
        self.substitutions += 1
        opening = node.children[0] if node.children else None
        inner_start = opening.end_byte if opening is not None else node.start_byte
        inner_end = node.children[-1].start_byte if len(node.children) > 1 else node.end_byte
        items: list[Item] = []
        inner = self.source[inner_start:inner_end]
        outer, self.bodies = self.bodies, []  # its here-documents are its own
        if opening is not None and opening.type == "`" and b"\\" in inner:
            # `echo \`git push\``: bash undoes these escapes, then reads the line
            again = read(quoting.backticks(inner), level + 1)
            self.merge(again, items, quoting.text(inner))
        else:
            self.children(node, items, level)
        out.append(Scope(tuple(items), self.plain(inner_start, inner_end), nested=True, bodies=tuple(self.bodies)))
        self.bodies = outer

    def merge(self, again: Script | None, out: list[Item], text: str) -> None:
        """A part read again on its own (``again``; None: it could not be): its items, but for
        the stand-in command a here-document's body is read through."""
        if again is None:
            out.append(Unread(text))
            return
        self.substitutions += again.substitutions
        self.bodies += again.bodies
        self.broken |= again.broken
        out += [item for item in again.items if not (isinstance(item, Command) and item.words[:1] == (":",))]

    def _expands(self, body: Node) -> bool:
        """Whether a here-document's body is expanded: its delimiter is not quoted (<<EOF)."""
        starts = [c for c in body.parent.children if c.type == "heredoc_start"] if body.parent is not None else []
        return not starts or not any(q in self.raw(starts[0]) for q in "'\"\\")

    # ---------------------------------------------------------------- simple commands

    def command(self, node: Node, out: list[Item], level: int) -> Command:
        words: list[str] = []
        writes: list[str] = []
        end = -1
        for index, child in enumerate(node.children):
            field = node.field_name_for_child(index)
            if child.type == "variable_assignment":
                words.append(self.assignment(child, out, level))
            elif child.type in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                writes += self.redirect(child, out, level)
            elif field in ("name", "argument") or child.type == "command_name":
                value = self.word(child, out, level)
                if child.start_byte == end and words:  # `$"x"`: parts the grammar split, one word to bash
                    words[-1] += value
                else:
                    words.append(value)
                end = child.end_byte
            elif child.is_named or child.is_missing:
                self.visit(child, out, level + 1)
        return Command(tuple(words), tuple(writes))

    def declaration(self, node: Node, out: list[Item], level: int) -> Command:
        """``export A=1 B``, ``local``, ``declare -a``, ``unset``: a command of those words."""
        words = [self.raw(node.children[0])] if node.children else []
        for child in node.children[1:]:
            if child.type == "variable_assignment":
                words.append(self.assignment(child, out, level))
            elif child.is_named:
                words.append(self.word(child, out, level))
        return Command(tuple(words))

    def assignment(self, node: Node, out: list[Item], level: int) -> str:
        """``NAME=VALUE`` (``+=``; an array's elements joined by spaces)."""
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        start = name.end_byte if name is not None else node.start_byte
        operator = quoting.text(self.source[start:value.start_byte if value is not None else node.end_byte]).strip()
        text = (self.raw(name) if name is not None else "") + operator
        if value is None:
            return text
        if value.type == "array":
            return text + " ".join(self.word(element, out, level) for element in value.named_children)
        return text + self.word(value, out, level)

    def pipeline(self, node: Node, out: list[Item], level: int) -> None:
        """Each element a scope of its own (bash runs each in a subshell), together a piped one."""
        elements: list[Item] = []
        for element in node.named_children:
            items: list[Item] = []
            if element.type == "redirected_statement":
                for before in self._misgrouped(element)[0]:  # not in the pipeline: before it
                    self.visit(before, out, level + 1)
            self.visit(element, items, level + 1)
            elements.append(Scope(tuple(items), self.plain(element.start_byte, element.end_byte)))
        out.append(Scope(tuple(elements), self.plain(node.start_byte, node.end_byte), piped=True))

    def _misgrouped(self, node: Node) -> tuple[list[Node], Node | None]:
        """A redirection after a list's last command (``a && b 2>&1 | c``) is that command's,
        but the grammar gives it the list (and puts the list in the pipeline): the list's other
        commands, and the one the redirection is for."""
        body = node.child_by_field_name("body")
        if body is None or body.type != "list":
            return [], body
        elements = self._flat(body)
        return elements[:-1], elements[-1]

    def redirected(self, node: Node, out: list[Item], level: int) -> None:
        before, body = self._misgrouped(node)
        if node.parent is None or node.parent.type != "pipeline":  # pipeline() has read them
            for element in before:
                self.visit(element, out, level + 1)
        writes: list[str] = []
        for child in node.children:
            if child == node.child_by_field_name("body"):
                if body is not None:
                    self.visit(body, out, level + 1)
            elif child.type in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                writes += self.redirect(child, out, level)
            elif child.is_named or child.is_missing:
                self.visit(child, out, level + 1)
        if writes:
            out.append(Command((), tuple(writes)))

    def redirect(self, node: Node, out: list[Item], level: int) -> list[str]:
        """The files a redirection writes. A here-document's node also holds, in this grammar,
        what follows it on its line (``cat <<EOF | sh``, ``<<EOF && git push``, ``<<EOF > f``)."""
        if node.type != "file_redirect":
            writes: list[str] = []
            for child in node.children:
                if child.type == "file_redirect":
                    writes += self.redirect(child, out, level)
                elif (child.is_named or child.is_missing) and child.type not in ("heredoc_start", "heredoc_end"):
                    self.visit(child, out, level + 1)
            return writes
        destinations = [c for i, c in enumerate(node.children) if node.field_name_for_child(i) == "destination"]
        descriptor = node.child_by_field_name("descriptor")
        start = descriptor.end_byte if descriptor is not None else node.start_byte
        end = destinations[0].start_byte if destinations else node.end_byte
        operator = re.sub(r"\s", "", quoting.text(self.source[start:end]))  # `<` `>` around an ERROR: `<>`
        targets = [self.word(d, out, level) for d in destinations]
        for child in node.children:
            if child.type == "ERROR":
                self.visit(child, out, level + 1)
        if operator not in _WRITES or (operator == ">&" and all(t.isdigit() or t == "-" for t in targets)):
            return []
        return targets

    def word(self, node: Node, out: list[Item], level: int) -> str:
        """The word bash makes of ``node``, the command lines in it appended to ``out``."""
        kind = node.type
        if level > MAX_NESTING:
            out.append(Unread(self.plain(node.start_byte, node.end_byte)))
            return UNKNOWN
        if kind == "word":
            return quoting.word(self.source[node.start_byte:node.end_byte])
        if kind == "raw_string":
            return self.raw(node)[1:-1]
        if kind == "ansi_c_string":
            return quoting.ansi_c(self.raw(node)[2:-1])
        if kind in ("command_substitution", "process_substitution"):
            self.substitution(node, out, level + 1)
            inner = " ".join(self.raw(node).strip("$()`<>").split())
            if kind == "command_substitution" and inner == "pwd":
                return HERE
            if kind == "command_substitution" and inner == "git rev-parse --show-toplevel":
                return TOP
            return UNKNOWN
        if kind in ("simple_expansion", "expansion"):
            names = [c for c in node.children if c.type not in ("$", "${", "}")]
            if len(names) == 1 and names[0].type == "variable_name" and self.raw(names[0]) == "PWD":
                return HERE
            self.children(node, out, level)  # ${X:-$(git push)}
            return self.raw(node)
        if kind in ("string", "translated_string", "concatenation", "command_name"):
            return self.joined(node, out, level, quoted=kind != "concatenation" and kind != "command_name")
        self.children(node, out, level)  # $((1 + $(n))), numbers, patterns, brace lists: as written
        return self.raw(node)

    def joined(self, node: Node, out: list[Item], level: int, *, quoted: bool) -> str:
        """A word of parts: each part's word, and the text between them (in double quotes:
        escapes decoded as bash decodes them there)."""
        parts: list[str] = []
        at = node.start_byte
        for child in node.children:
            gap = self.source[at:child.start_byte]
            parts.append(quoting.double_quoted(gap) if quoted else quoting.text(gap))
            at = child.end_byte
            if child.type in ('"', '$"') and quoted:
                continue
            if child.type == "string_content":
                parts.append(quoting.double_quoted(self.source[child.start_byte:child.end_byte]))
            elif child.is_named:
                parts.append(self.word(child, out, level + 1))
            else:
                parts.append(self.raw(child))
        parts.append(quoting.text(self.source[at:node.end_byte]))
        return "".join(parts)
