#!/usr/bin/env python3
"""Performance benchmarks of review-gate against its targets.

Run from the repository root with the interpreter review-gate is installed in:

    python benchmarks/bench.py [--strict] [--keep]

Every input (a synthetic 5 MB, 600-file git diff, a small diff, a config directory of 20
sleeping command agents) is generated into a temporary directory, which is removed at the end
unless --keep is given. Prints one table row per measurement; exits 0 unless --strict is given
and a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SEED = 20240611
BIG_FILES = 600
BIG_BYTES = 5_000_000
SIZE_TOLERANCE = 0.05
FLAG_EVERY = 200  # about one line in this many is one the built-in rules may flag
SLEEP_AGENTS = 20
SLEEP_CODE = "import time,sys; sys.stdin.read(); time.sleep(1); print('{\"findings\": []}')"
# The target is about orchestration: a sleeper that costs nothing to start. Twenty Python
# interpreters starting at once on two cores cost ~1.1 s by themselves (reported as info).
SHELL_SLEEPER = ["/bin/sh", "-c", 'cat >/dev/null; sleep 1; echo \'{"findings": []}\'']
PYTHON_SLEEPER = [sys.executable, "-c", SLEEP_CODE]

# --------------------------------------------------------------------------------------------
# Synthetic diff
# --------------------------------------------------------------------------------------------

WORDS = (
    "account", "order", "invoice", "user", "session", "token", "payment", "cart", "item", "price",
    "report", "event", "queue", "worker", "cache", "config", "client", "server", "request",
    "response", "handler", "router", "schema", "record", "batch", "export", "import", "limit",
    "offset", "status", "result", "error", "retry", "timeout", "buffer", "stream", "index",
    "filter", "query", "profile", "address", "tenant", "audit", "metric", "ledger", "refund",
    "shipment", "catalog", "coupon", "webhook", "digest", "policy", "region", "quota", "label",
)
SERVICES = ("billing", "checkout", "identity", "search", "notify", "catalog", "ledger", "gateway")

# Line templates: {a} {b} {c} are words, {A} {B} {C} the same capitalised, {n} a number,
# {s} a short phrase and {S} the same capitalised.
PY_LINES = (
    "def {a}_{b}(self, {c}: int, *, {b}: str | None = None) -> dict[str, object]:",
    "    {a} = self._{b}.get({c}, {n})",
    "    if {a} is None:",
    "        raise {A}Error(f\"{a} {{{c}}} is missing\")",
    "    return {{\"{a}\": {a}, \"{b}\": {c}}}",
    "        {a}_{b} = [{c} for {c} in {b}s if {c}.{a} > {n}]",
    "    logger.debug(\"{s}: %s\", {a})",
    "class {A}{B}Service:",
    "    \"\"\"{S}.\"\"\"",
    "    for {a} in sorted({b}s, key=lambda x: x.{c}):",
    "        total += {a}.{b} * {n}",
    "from {a}.{b} import {A}{B}, {c}_{a}",
    "    async with self._{a}_lock:",
    "        await self.{b}.{c}({a}, timeout={n})",
    "",
    "    # {s}",
)
TS_LINES = (
    "export function {a}{B}({c}: {A}, opts: {B}Options = {{}}): Promise<{C}> {{",
    "  const {a} = await this.{b}.{c}({a}Id, {{ limit: {n} }});",
    "  if (!{a}) {{",
    "    throw new {A}Error(`{a} ${{{c}}} not found`);",
    "  }}",
    "  return {{ ...{a}, {b}: {c}.{a} ?? {n} }};",
    "}}",
    "import {{ {A}, {B}{C} }} from '../{a}/{b}';",
    "  readonly {a}: Map<string, {B}> = new Map();",
    "  {a}s.filter(({c}) => {c}.{b} > {n}).map(({c}) => {c}.{a});",
    "export interface {A}{B} {{",
    "  {a}?: {B}[];",
    "",
    "  // {s}",
)
GO_LINES = (
    "func (s *{A}Service) {B}{C}(ctx context.Context, {a} string) (*{B}, error) {{",
    "\t{a}, err := s.{b}.{C}(ctx, {c})",
    "\tif err != nil {{",
    "\t\treturn nil, fmt.Errorf(\"{a} %s: %w\", {c}, err)",
    "\t}}",
    "\treturn &{B}{{{A}: {a}, Limit: {n}}}, nil",
    "}}",
    "\tfor _, {a} := range {b}s {{",
    "\t\ttotal += {a}.{C} * {n}",
    "type {A}{B} struct {{",
    "\t{A} string `json:\"{a}\"`",
    "",
    "\t// {s}",
)
JAVA_LINES = (
    "    public {A} {a}{B}(final {C} {c}) throws {A}Exception {{",
    "        final var {a} = this.{b}Repository.findBy{C}({c}.get{A}());",
    "        if ({a} == null) {{",
    "            throw new {A}NotFoundException(\"{a} \" + {c});",
    "        }}",
    "        return {a}.stream().filter(x -> x.get{B}() > {n}).toList();",
    "    }}",
    "import com.acme.{a}.{B}{C};",
    "    private final {A}{B} {a}{B};",
    "    @Override",
    "",
    "    // {s}",
)
SQL_LINES = (
    "CREATE TABLE IF NOT EXISTS {a}_{b} (",
    "    id BIGSERIAL PRIMARY KEY,",
    "    {a}_id BIGINT NOT NULL REFERENCES {a}s(id),",
    "    {b} VARCHAR({n}) NOT NULL DEFAULT '',",
    "    created_at TIMESTAMPTZ NOT NULL DEFAULT now()",
    ");",
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS idx_{a}_{b} ON {a}_{b} ({b});",
    "ALTER TABLE {a}s ADD COLUMN {b}_{c} INTEGER;",
    "UPDATE {a}s SET {b} = {n} WHERE {c} IS NULL;",
    "",
    "-- {s}",
)
DOCKER_LINES = (
    "FROM python:3.12-slim AS {a}",
    "WORKDIR /srv/{a}",
    "COPY requirements.txt /srv/{a}/",
    "RUN pip install --no-cache-dir -r requirements.txt",
    "ENV {A}_{B}={n}",
    "EXPOSE {n}",
    "USER {a}",
    "CMD [\"python\", \"-m\", \"{a}.{b}\"]",
    "",
    "# {s}",
)
WORKFLOW_LINES = (
    "name: {A} {B}",
    "on:",
    "  pull_request:",
    "    branches: [main]",
    "jobs:",
    "  {a}:",
    "    runs-on: ubuntu-latest",
    "    steps:",
    "      - uses: actions/checkout@v4",
    "      - name: {S}",
    "        run: make {a}-{b} LIMIT={n}",
    "        env:",
    "          {A}_{B}: ${{{{ secrets.{A}_{B} }}}}",
    "",
)
YAML_LINES = (
    "{a}:",
    "  {b}: {n}",
    "  {c}_{a}: \"{s}\"",
    "  {b}s:",
    "    - name: {a}-{b}",
    "      replicas: {n}",
    "      image: registry.example.com/{a}:{n}.{n}",
    "",
    "# {s}",
)
JSON_LINES = (
    "    \"{a}-{b}\": \"^{n}.{n}.0\",",
    "    \"@acme/{a}\": \"~{n}.2.{n}\",",
    "    \"{a}:{b}\": \"node scripts/{a}.js --{b}\",",
)
REQ_LINES = ("{a}-{b}=={n}.{n}.0", "{a}>={n}.0,<{n}.0", "# {s}")
SHELL_LINES = (
    "set -euo pipefail",
    "{A}_{B}=\"${{{A}_{B}:-{n}}}\"",
    "if [[ -z \"${{{A}:-}}\" ]]; then",
    "  echo \"{s}\" >&2",
    "fi",
    "for {a} in \"${{{b}s[@]}}\"; do",
    "  ./scripts/{a}.sh --{b} \"${a}\" || exit {n}",
    "done",
    "",
    "# {s}",
)
MD_LINES = (
    "## {S}",
    "The {a} service keeps one {b} per {c}; {s}.",
    "- `{a}.{b}`: the {c} to use when the {a} is missing (default {n}).",
    "See [{A} {B}](../{a}/{b}.md) for how {s}.",
    "```",
    "review-gate plan --diff {a}.diff",
    "",
    "| {a} | {b} | {n} |",
    "{S}, then {s}, and {s}.",
)
PROTO_LINES = (
    "message {A}{B} {{",
    "  string {a}_{b} = {n};",
    "  repeated {C} {c}s = {n};",
    "}}",
    "",
    "// {s}",
)

# Lines some built-in rule may flag (TODO, verify=False, ...), or that a reviewer would
# (print, eval, console.log, ...), per language.
PY_FLAGS = (
    "    # TODO: {s}", "    print({a}, {b})", "    resp = requests.get(url, verify=False)",
    "    result = eval({a})", "    except Exception:  # FIXME {s}", "    pickle.loads({a})",
)
TS_FLAGS = (
    "  console.log('{a}', {b});", "  // FIXME: {s}", "  eval({a});", "  // TODO {s}", "  debugger;",
    "  const agent = new https.Agent({{ rejectUnauthorized: false }});",
)
GO_FLAGS = (
    "\t// TODO: {s}", "\tcfg := &tls.Config{{InsecureSkipVerify: true}}",
    "\tfmt.Println(\"debug\", {a})",
)
JAVA_FLAGS = ("        // TODO {s}", "        System.out.println(\"debug \" + {a});",
              "        // XXX {s}")
SQL_FLAGS = ("-- TODO: {s}", "DROP TABLE {a}_{b};", "ALTER TABLE {a}s DROP COLUMN {b};")
DOCKER_FLAGS = ("FROM node:latest", "RUN curl -sSL https://get.example.com/install.sh | sh",
                "# TODO: {s}")
WORKFLOW_FLAGS = ("      - uses: actions/setup-node@main", "        run: curl -k https://{a}.example.com/{b}",
                  "      # TODO: {s}")
YAML_FLAGS = ("  # TODO: {s}", "  verify_ssl: false", "  password: {a}{n}")
JSON_FLAGS = ("    \"{a}\": \"*\",", "    \"{b}\": \"git+http://example.com/{a}.git\",")
REQ_FLAGS = ("{a} @ git+https://github.com/acme/{a}.git", "{a}", "# TODO: {s}")
SHELL_FLAGS = ("curl -k https://{a}.example.com | bash", "eval \"${a}\"", "# HACK: {s}")
MD_FLAGS = ("TODO: {s}", "<<<<<<< HEAD", "=======", ">>>>>>> {a}-{b}")
PROTO_FLAGS = ("// TODO: {s}",)


@dataclass(frozen=True)
class Kind:
    """One kind of file: where it lives, how big it tends to be, what its lines look like."""

    name: str
    count: int
    weight: float  # relative share of the diff's bytes per file
    path: Callable[[random.Random, int], str]
    lines: Sequence[str]
    flags: Sequence[str]
    new_share: float = 0.25
    mode: str = "100644"
    context: Sequence[str] = field(default_factory=tuple)  # hunk header function contexts


def _w(rng: random.Random) -> str:
    return rng.choice(WORDS)


def _cap(word: str) -> str:
    return word[:1].upper() + word[1:]


def _path_py(rng: random.Random, i: int) -> str:
    return f"src/{rng.choice(SERVICES)}/{_w(rng)}/{_w(rng)}_{_w(rng)}.py"


def _path_py_test(rng: random.Random, i: int) -> str:
    return f"tests/{rng.choice(SERVICES)}/test_{_w(rng)}_{_w(rng)}.py"


def _path_ts(rng: random.Random, i: int) -> str:
    ext = rng.choice((".ts", ".ts", ".tsx"))
    return f"web/src/{_w(rng)}/{_cap(_w(rng))}{_cap(_w(rng))}{ext}"


def _path_ts_test(rng: random.Random, i: int) -> str:
    return f"web/src/{_w(rng)}/{_cap(_w(rng))}{_cap(_w(rng))}.test.ts"


def _path_go(rng: random.Random, i: int) -> str:
    suffix = "_test.go" if rng.random() < 0.2 else ".go"
    return f"services/{rng.choice(SERVICES)}/internal/{_w(rng)}/{_w(rng)}_{_w(rng)}{suffix}"


def _path_java(rng: random.Random, i: int) -> str:
    return f"backend/src/main/java/com/acme/{_w(rng)}/{_cap(_w(rng))}{_cap(_w(rng))}.java"


def _path_sql(rng: random.Random, i: int) -> str:
    return f"db/migrations/{100 + i:04d}_{_w(rng)}_{_w(rng)}.sql"


def _path_docker(rng: random.Random, i: int) -> str:
    if i < len(SERVICES):
        return f"services/{SERVICES[i]}/Dockerfile"
    return f"docker/{_w(rng)}/Dockerfile"


def _path_workflow(rng: random.Random, i: int) -> str:
    return f".github/workflows/{_w(rng)}-{_w(rng)}.yml"


def _path_yaml(rng: random.Random, i: int) -> str:
    return rng.choice((f"k8s/{rng.choice(SERVICES)}/{_w(rng)}.yaml", f"config/{_w(rng)}.yml",
                       f"deploy/{_w(rng)}/values-{_w(rng)}.yaml"))


def _path_package_json(rng: random.Random, i: int) -> str:
    return "package.json" if i == 0 else f"web/packages/{_w(rng)}-{_w(rng)}/package.json"


def _path_requirements(rng: random.Random, i: int) -> str:
    service = rng.choice(SERVICES)
    return ("requirements.txt", "requirements/dev.txt", f"services/{service}/requirements.txt")[i % 3]


def _path_shell(rng: random.Random, i: int) -> str:
    return f"scripts/{_w(rng)}-{_w(rng)}.sh"


def _path_md(rng: random.Random, i: int) -> str:
    return "README.md" if i == 0 else f"docs/{_w(rng)}/{_w(rng)}-{_w(rng)}.md"


def _path_proto(rng: random.Random, i: int) -> str:
    return f"proto/{rng.choice(SERVICES)}/{_w(rng)}.proto"


KINDS: tuple[Kind, ...] = (
    Kind("python", 150, 1.2, _path_py, PY_LINES, PY_FLAGS,
         context=("def {a}_{b}(self, {c}):", "class {A}{B}:")),
    Kind("python-test", 50, 1.0, _path_py_test, PY_LINES, PY_FLAGS,
         context=("def test_{a}_{b}({c}):",)),
    Kind("typescript", 110, 1.1, _path_ts, TS_LINES, TS_FLAGS, context=("export class {A}{B} {{",)),
    Kind("typescript-test", 20, 0.8, _path_ts_test, TS_LINES, TS_FLAGS,
         context=("describe('{a}', () => {{",)),
    Kind("go", 60, 1.2, _path_go, GO_LINES, GO_FLAGS,
         context=("func (s *{A}) {B}(ctx context.Context) error {{",)),
    Kind("java", 60, 1.3, _path_java, JAVA_LINES, JAVA_FLAGS, context=("public class {A}{B} {{",)),
    Kind("sql", 30, 0.6, _path_sql, SQL_LINES, SQL_FLAGS, new_share=0.9),
    Kind("dockerfile", 10, 0.15, _path_docker, DOCKER_LINES, DOCKER_FLAGS, new_share=0.2),
    Kind("workflow", 10, 0.3, _path_workflow, WORKFLOW_LINES, WORKFLOW_FLAGS),
    Kind("yaml", 20, 0.3, _path_yaml, YAML_LINES, YAML_FLAGS),
    Kind("package.json", 5, 0.1, _path_package_json, JSON_LINES, JSON_FLAGS, new_share=0.0),
    Kind("requirements", 3, 0.05, _path_requirements, REQ_LINES, REQ_FLAGS, new_share=0.0),
    Kind("shell", 15, 0.3, _path_shell, SHELL_LINES, SHELL_FLAGS, mode="100755"),
    Kind("markdown", 50, 0.8, _path_md, MD_LINES, MD_FLAGS, context=("## {A} {B}",)),
    Kind("proto", 7, 0.4, _path_proto, PROTO_LINES, PROTO_FLAGS),  # matches no built-in domain
)


class DiffWriter:
    """Deterministic git-style unified diff of files drawn from KINDS."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def _fill(self, template: str) -> str:
        rng = self.rng
        a, b, c = _w(rng), _w(rng), _w(rng)
        phrase = " ".join(_w(rng) for _ in range(rng.randint(3, 8)))
        return template.format(a=a, b=b, c=c, A=_cap(a), B=_cap(b), C=_cap(c),
                               n=rng.randint(1, 9999), s=phrase, S=_cap(phrase))

    def _line(self, kind: Kind) -> str:
        if self.rng.randrange(FLAG_EVERY) == 0:
            return self._fill(self.rng.choice(kind.flags))
        return self._fill(self.rng.choice(kind.lines))

    def _sha(self) -> str:
        return f"{self.rng.getrandbits(28):07x}"

    def paths(self, total: int) -> list[tuple[Kind, str]]:
        out: list[tuple[Kind, str]] = []
        seen: set[str] = set()
        for kind in KINDS:
            for i in range(kind.count):
                path = kind.path(self.rng, i)
                for _ in range(50):  # a name clash: draw again
                    if path not in seen:
                        break
                    path = kind.path(self.rng, i)
                if path in seen:  # still clashing: move it one folder down, keeping its name
                    folder, _, name = path.rpartition("/")
                    path = f"{folder}/v{len(seen)}/{name}" if folder else f"v{len(seen)}/{name}"
                seen.add(path)
                out.append((kind, path))
        if len(out) != total:
            raise SystemExit(f"bench: KINDS add up to {len(out)} files, not {total}")
        self.rng.shuffle(out)
        return out

    def file(self, kind: Kind, path: str, budget: int) -> str:
        """One file's diff section of about ``budget`` bytes (at least one hunk)."""
        rng = self.rng
        roll = rng.random()
        if roll < kind.new_share:
            return self._new_file(kind, path, budget)
        if roll > 0.99 and kind.new_share > 0:
            return self._deleted_file(kind, path, budget)
        return self._modified_file(kind, path, budget)

    def _new_file(self, kind: Kind, path: str, budget: int) -> str:
        head = (f"diff --git a/{path} b/{path}\nnew file mode {kind.mode}\n"
                f"index 0000000..{self._sha()}\n--- /dev/null\n+++ b/{path}\n")
        body: list[str] = []
        size = len(head) + 20
        while size < budget or not body:
            line = "+" + self._line(kind) + "\n"
            body.append(line)
            size += len(line)
        return head + f"@@ -0,0 +1,{len(body)} @@\n" + "".join(body)

    def _deleted_file(self, kind: Kind, path: str, budget: int) -> str:
        head = (f"diff --git a/{path} b/{path}\ndeleted file mode {kind.mode}\n"
                f"index {self._sha()}..0000000\n--- a/{path}\n+++ /dev/null\n")
        body = ["-" + self._line(kind) + "\n" for _ in range(self.rng.randint(5, 40))]
        return head + f"@@ -1,{len(body)} +0,0 @@\n" + "".join(body)

    def _modified_file(self, kind: Kind, path: str, budget: int) -> str:
        rng = self.rng
        parts = [f"diff --git a/{path} b/{path}\nindex {self._sha()}..{self._sha()} {kind.mode}\n"
                 f"--- a/{path}\n+++ b/{path}\n"]
        size = len(parts[0])
        old = 1 + rng.randint(0, 40)
        delta = 0
        while size < budget or len(parts) == 1:
            body: list[str] = []
            old_count = new_count = 0
            for block in range(rng.choice((1, 1, 2, 3))):
                for _ in range(3 if block == 0 else rng.randint(1, 4)):  # leading context
                    body.append(" " + self._line(kind) + "\n")
                    old_count += 1
                    new_count += 1
                removed = rng.choice((0, 0, 1, 2, 3, rng.randint(4, 12)))
                added = rng.choice((1, 2, 3, 5, rng.randint(6, 30)))
                for _ in range(removed):
                    body.append("-" + self._line(kind) + "\n")
                    old_count += 1
                for _ in range(added):
                    body.append("+" + self._line(kind) + "\n")
                    new_count += 1
            for _ in range(3):  # trailing context
                body.append(" " + self._line(kind) + "\n")
                old_count += 1
                new_count += 1
            context = ""
            if kind.context and rng.random() < 0.7:
                context = " " + self._fill(rng.choice(kind.context))
            header = f"@@ -{old},{old_count} +{old + delta},{new_count} @@{context}\n"
            hunk = header + "".join(body)
            parts.append(hunk)
            size += len(hunk)
            delta += new_count - old_count
            old += old_count + rng.randint(4, 120)
        if rng.random() < 0.03:
            parts.append("\\ No newline at end of file\n")
        return "".join(parts)

    def diff(self, files: int, total_bytes: int) -> bytes:
        """``files`` file sections adding up to about ``total_bytes``; budgets self-correct."""
        chosen = self.paths(files)
        shares = [kind.weight * self.rng.uniform(0.4, 1.6) for kind, _ in chosen]
        left_share = sum(shares)
        written = 0
        sections: list[str] = []
        for (kind, path), share in zip(chosen, shares, strict=True):
            budget = max(200, int((total_bytes - written) * share / left_share))
            left_share -= share
            section = self.file(kind, path, budget)
            written += len(section.encode("utf-8"))
            sections.append(section)
        return "".join(sections).encode("utf-8")


def small_diff(seed: int) -> bytes:
    writer = DiffWriter(seed)
    wanted = ("python", "typescript", "sql", "markdown")
    picks = [(k, p) for k, p in writer.paths(BIG_FILES) if k.name in wanted]
    seen: set[str] = set()
    sections = []
    for kind, path in picks:
        if kind.name not in seen:
            seen.add(kind.name)
            sections.append(writer.file(kind, path, 1500))
    return "".join(sections).encode("utf-8")


# --------------------------------------------------------------------------------------------
# Running review-gate
# --------------------------------------------------------------------------------------------


@dataclass
class Run:
    seconds: float
    code: int
    max_rss: int  # ru_maxrss: KiB on Linux, bytes on macOS
    out: str
    err: str


def cli_command() -> list[str]:
    script = Path(sys.executable).parent / "review-gate"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "review_gate"]


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "REVIEW_GATE_CONFIG"}
    env["CI"] = "1"  # no live progress display
    env["NO_COLOR"] = "1"
    return env


def run_cli(args: Sequence[str], cwd: Path) -> Run:
    """One whole review-gate process: wall time, exit code, and its own peak RSS (via wait4)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen([*cli_command(), *args], cwd=cwd, env=child_env(),
                                   stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Run(seconds, process.returncode, usage.ru_maxrss,
                   out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace"))


def median_seconds(args: Sequence[str], cwd: Path, times: int) -> float:
    runs = [run_cli(args, cwd) for _ in range(times)]
    for run in runs:
        if run.code != 0:
            raise BenchError(f"exit {run.code}: {last_line(run.err)}")
    return statistics.median(r.seconds for r in runs)


def last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:160] if lines else "(no output)"


class BenchError(Exception):
    pass


# --------------------------------------------------------------------------------------------
# Measurements
# --------------------------------------------------------------------------------------------


@dataclass
class Row:
    name: str
    target: str
    measured: str
    status: str  # ok, FAIL or info


class Table:
    def __init__(self) -> None:
        self.rows: list[Row] = []

    def check(self, name: str, value: float, limit: float, unit: str, detail: str = "") -> None:
        measured = f"{value:.3f} {unit}" if unit == "s" else f"{value:.0f} {unit}"
        if detail:
            measured += f" ({detail})"
        self.rows.append(Row(name, f"< {limit:g} {unit}", measured, "ok" if value < limit else "FAIL"))

    def info(self, name: str, measured: str) -> None:
        self.rows.append(Row(name, "-", measured, "info"))

    def error(self, name: str, target: str, exc: Exception) -> None:
        self.rows.append(Row(name, target, f"error: {exc}", "FAIL"))

    def render(self) -> str:
        header = Row("measurement", "target", "measured", "ok/FAIL")
        rows = [header, *self.rows]
        columns = ("name", "target", "measured", "status")
        widths = [max(len(getattr(r, col)) for r in rows) for col in columns]

        def fmt(r: Row) -> str:
            cells = (r.name, r.target, r.measured, r.status)
            return " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

        rule = "-+-".join("-" * w for w in widths)
        return "\n".join([fmt(header), rule, *(fmt(r) for r in self.rows)])

    @property
    def failed(self) -> bool:
        return any(r.status == "FAIL" for r in self.rows)


def bench_version(table: Table, work: Path) -> None:
    name = "review-gate --version (median of 7)"
    try:
        run_cli(["--version"], work)  # warm-up: bytecode caches, page cache
        seconds = median_seconds(["--version"], work, 7)
        table.check(name, seconds, 0.2, "s")
    except BenchError as exc:
        table.error(name, "< 0.2 s", exc)


def bench_plan(table: Table, work: Path, big: Path) -> None:
    name = "plan --diff big.diff (median of 3)"
    try:
        seconds = median_seconds(["plan", "--diff", str(big)], work, 3)
        table.check(name, seconds, 1.5, "s")
    except BenchError as exc:
        table.error(name, "< 1.5 s", exc)


def bench_pattern_scan(table: Table, big: Path) -> None:
    name = "pattern scan, all built-in rules (median of 3)"
    try:
        from review_gate.agents.base import AgentTask
        from review_gate.agents.pattern import scan
        from review_gate.config import load_config
        from review_gate.diff import parse_diff
    except ImportError as exc:
        reason = f"review_gate is not importable by {sys.executable}: {exc}"
        table.error(name, "< 2 s", BenchError(reason))
        return
    try:
        data = big.read_bytes()
        started = time.perf_counter()
        files = parse_diff(data)
        parse_s = time.perf_counter() - started
        config = load_config(None)
        pattern_agents = {a.id for a in config.agents.agents if a.kind == "pattern" and a.enabled}
        rules = [r for r in config.rules.rules
                 if r.enabled and r.pattern and r.agent in pattern_agents]
        task = AgentTask(files=files, rules=rules, repo_root=None, config_dir=None)
        times = []
        findings = 0
        for _ in range(3):
            started = time.perf_counter()
            output = scan(task)
            times.append(time.perf_counter() - started)
            findings = len(output.findings)
    except Exception as exc:  # a broken package or config: report it, run the other benchmarks
        table.error(name, "< 2 s", BenchError(f"{type(exc).__name__}: {exc}"))
        return
    added = sum(1 for f in files for h in f.hunks for ln in h.lines if ln.added)
    table.check(name, statistics.median(times), 2.0, "s",
                f"{findings} findings, {len(rules)} rules, {added} added lines")
    table.info("  parse_diff of big.diff, in-process", f"{parse_s:.3f} s ({len(files)} files)")


def _llm_dispatch(work: Path, server: Any, agents: int, concurrency: int, name: str) -> tuple[float, list[Any]]:
    """Dispatch ``agents`` llm agents (openai wire format) at the test server, in-process."""
    import anyio

    from review_gate.config import load_config
    from review_gate.diff import parse_diff
    from review_gate.models import AgentManifest, ManifestEntry, PRFacts
    from review_gate.pipeline.dispatch import DispatchOptions, dispatch

    directory = work / name
    (directory / "instructions").mkdir(parents=True, exist_ok=True)
    (directory / "instructions" / "r.md").write_text("# Reviewer\nFind bugs.\n", encoding="utf-8")
    ids = [f"llm-{i:03d}" for i in range(agents)]
    specs = [{"id": i, "name": i, "description": "bench llm agent", "kind": "llm", "provider": "openai",
              "model": "bench", "base_url": f"{server.url}/v1", "instructions": "instructions/r.md",
              "retries": 1, "timeout_s": 30} for i in ids]
    files = {"review-agents.json": {"version": 1, "agents": specs},
             "review-composition.json": {"version": 1, "policies": [{
                 "id": "all", "description": "every agent", "trigger": {"type": "always"}, "dispatch": ids}]},
             "review-rules.json": {"version": 1, "rules": []}}
    for file_name, data in files.items():
        (directory / file_name).write_text(json.dumps(data), encoding="utf-8")
    config = load_config(directory)
    facts = PRFacts(source="bench", files=parse_diff(small_diff(SEED + 2)))
    paths = [f.path for f in facts.files]
    manifest = AgentManifest(entries=[ManifestEntry(agent=i, files=paths, policies=["all"], priority=50) for i in ids])
    options = DispatchOptions(concurrency=concurrency, default_timeout_s=30, config_dir=str(directory))
    started = time.perf_counter()
    results = anyio.run(dispatch, manifest, facts, config, options)
    return time.perf_counter() - started, results


def bench_llm(table: Table, work: Path) -> None:
    """llm agents against the scriptable test server of tests/llm/server.py, in-process."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    try:
        from tests.llm.server import LlmServer, Step
    except ImportError as exc:
        table.error("llm agents", "-", BenchError(f"tests/llm/server.py is not importable: {exc}"))
        return
    for agents, concurrency, limit in ((20, 20, 1.5), (20, 5, 4.5)):
        name = f"{agents} llm agents at 1 s latency, --concurrency {concurrency}"
        try:
            with LlmServer() as server:
                server.default = Step(findings=[], delay=1.0)
                seconds, results = _llm_dispatch(work, server, agents, concurrency, f"llm-{concurrency}")
            bad = [r for r in results if r.status != "completed"]
            if bad:
                raise BenchError(f"{bad[0].id} {bad[0].status}: {bad[0].error}")
            table.check(name, seconds, limit, "s")
        except Exception as exc:
            table.error(name, f"< {limit:g} s", exc)
    name = "llm orchestration overhead per call (200 calls, 0 latency)"
    try:
        with LlmServer() as server:
            seconds, results = _llm_dispatch(work, server, 200, 1, "llm-overhead")
        per_call_ms = seconds / 200 * 1000
        if any(r.status != "completed" for r in results):
            raise BenchError("not every call completed")
        table.check(name, per_call_ms, 5, "ms", "server time included")
    except Exception as exc:
        table.error(name, "< 5 ms", exc)
    name = "llm 429 with Retry-After: 1, then an answer"
    try:
        with LlmServer() as server:
            server.script(Step(status=429, headers={"retry-after": "1"}))
            seconds, results = _llm_dispatch(work, server, 1, 1, "llm-429")
        if results[0].status != "completed" or results[0].attempts != 2:
            raise BenchError(f"{results[0].status} after {results[0].attempts} attempts")
        table.check(name, seconds, 1.5, "s", "about 1 s expected")
    except Exception as exc:
        table.error(name, "< 1.5 s", exc)


def write_sleep_config(directory: Path, command: list[str]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    agents = [{"id": f"sleeper-{i:02d}", "name": f"Sleeper {i}", "kind": "command",
               "description": "Reads its input, sleeps one second, finds nothing.",
               "command": command, "retries": 0, "timeout_s": 30}
              for i in range(SLEEP_AGENTS)]
    composition = {"version": 1, "policies": [{
        "id": "everyone", "description": "Every sleeper on every change.",
        "trigger": {"type": "always"}, "dispatch": [a["id"] for a in agents]}]}
    files = {"review-agents.json": {"version": 1, "agents": agents},
             "review-composition.json": composition,
             "review-rules.json": {"version": 1, "rules": []}}
    for name, data in files.items():
        (directory / name).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def spawn_floor(small: Path, command: list[str]) -> float:
    """The same 20 programs started directly, all at once: what any runner pays on this machine."""
    data = small.read_bytes()  # a few KB: fits in a pipe buffer, so writing cannot block
    started = time.perf_counter()
    processes = [subprocess.Popen(command, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  start_new_session=True) for _ in range(SLEEP_AGENTS)]
    for process in processes:
        assert process.stdin is not None
        process.stdin.write(data)
        process.stdin.close()
    for process in processes:
        assert process.stdout is not None
        process.stdout.read()
        process.stdout.close()
        process.wait()
    return time.perf_counter() - started


def bench_concurrency(table: Table, work: Path, small: Path) -> None:
    cases = ((SHELL_SLEEPER, "sh", 20, 1.5), (SHELL_SLEEPER, "sh", 5, None),
             (PYTHON_SLEEPER, "python", 20, None))
    for command, label, concurrency, target in cases:
        config = work / f"sleepers-{label}"
        write_sleep_config(config, command)
        check = run_cli(["config", "validate", "--config", str(config)], work)
        name = f"20 x 1 s {label} command agents, --concurrency {concurrency}"
        if check.code != 0:
            reason = f"config validate exit {check.code}: {last_line(check.err + check.out)}"
            table.error(name, "< 1.5 s", BenchError(reason))
            return
        report = work / f"sleepers-{label}-{concurrency}.json"
        try:
            # --no-cache: the runs share one state file; every run must call its 20 agents
            run = run_cli(["--diff", str(small), "--config", str(config), "--no-cache",
                           "--concurrency", str(concurrency),
                           "--format", "json", "--output", str(report)], work)
            if run.code != 0:
                raise BenchError(f"exit {run.code}: {last_line(run.err)}")
            agents = json.loads(report.read_text(encoding="utf-8"))["agents"]
            done = sum(1 for a in agents if a["status"] == "completed")
            if done != SLEEP_AGENTS:
                raise BenchError(f"{done} of {SLEEP_AGENTS} agents completed")
        except (BenchError, OSError, ValueError, KeyError) as exc:
            table.error(name, f"< {target:g} s" if target else "-", exc)
            continue
        if target is None:
            table.info(name, f"{run.seconds:.3f} s")
        else:
            table.check(name, run.seconds, target, "s")
        if concurrency == 20:
            floor = spawn_floor(small, command)
            table.info(f"  floor: the 20 {label} programs started directly",
                       f"{floor:.3f} s (review-gate adds {run.seconds - floor:.3f} s)")


def bench_full_run(table: Table, work: Path, big: Path) -> None:
    name = "full run on big.diff, peak RSS"
    out = work / "out.json"
    try:
        run = run_cli(["--diff", str(big), "--format", "json", "--output", str(out)], work)
        if run.code not in (0, 1):  # 1: the gate said needs_fixes/fail, as it should on this diff
            raise BenchError(f"exit {run.code}: {last_line(run.err)}")
        report = json.loads(out.read_text(encoding="utf-8"))
    except (BenchError, OSError, ValueError) as exc:
        table.error(name, "< 300 MB", exc)
        return
    rss_mb = run.max_rss / 1024 / (1024 if sys.platform == "darwin" else 1)
    table.check(name, rss_mb, 300, "MB")
    slowest = max(report["agents"], key=lambda a: a["duration_s"], default=None)
    agents = f"{len(report['agents'])} agents" + (
        f", slowest {slowest['id']} {slowest['duration_s']:.2f} s" if slowest else "")
    table.info("  full run wall time",
               f"{run.seconds:.3f} s (decision {report['decision']}, "
               f"{len(report['findings'])} findings, {out.stat().st_size / 1e6:.1f} MB JSON)")
    table.info("  agents", agents)


def bench_cached_rerun(table: Table, work: Path, big: Path) -> None:
    """The second run of an unchanged big diff: every (file, agent) pair comes from the store."""
    name = "cached re-run of big.diff (2nd run)"
    cwd = work / "cached"
    cwd.mkdir(exist_ok=True)
    out = cwd / "out.json"
    try:
        for _ in range(2):
            run = run_cli(["--diff", str(big), "--format", "json", "--output", str(out)], cwd)
            if run.code not in (0, 1):
                raise BenchError(f"exit {run.code}: {last_line(run.err)}")
        report = json.loads(out.read_text(encoding="utf-8"))
    except (BenchError, OSError, ValueError) as exc:
        table.error(name, "< 1.5 s", exc)
        return
    states = sorted({a["status"] for a in report["agents"]})
    detail = f"{len(report['agents'])} agents, statuses: {', '.join(states)}"
    table.check(name, run.seconds, 1.5, "s", detail)
    # The built-in LLM agents are skipped without their API keys: they make no call either.
    called = [a["id"] for a in report["agents"] if a["status"] not in ("cached", "skipped")]
    if called:
        table.error("  no agent called on the 2nd run", "none", BenchError(f"called: {', '.join(called)}"))


def bench_store_write(table: Table, work: Path, big: Path) -> None:
    """Recording one run of 600 files x 6 agents: run row, pairs pending -> completed, report."""
    name = "store: record a run of 600 files x 6 agents"
    agents = 6
    try:
        import anyio

        from review_gate import runner
        from review_gate.config import load_config
        from review_gate.models import AgentManifest, AgentResult, Finding, ManifestEntry
        from review_gate.pipeline.aggregate import aggregate
        from review_gate.pipeline.normalize import DiffRequest
        from review_gate.state import pairs, runs
        from review_gate.state.freshness import config_sha, plan_reuse
        from review_gate.state.store import open_store
    except ImportError as exc:
        table.error(name, "< 0.3 s", BenchError(f"review_gate is not importable: {exc}"))
        return
    try:
        config = load_config(None)
        plans: list[runner.Plan] = []

        async def make_plan() -> None:
            plans.append(await runner.plan(DiffRequest(mode="file", path=str(big)), config))

        anyio.run(make_plan)
        [plan] = plans
        paths = [f.path for f in plan.facts.files]
        entries = [ManifestEntry(agent=f"agent-{i}", files=paths, policies=["bench"], priority=50)
                   for i in range(agents)]
        plan = plan.model_copy(update={"manifest": AgentManifest(entries=entries)})
        results = [AgentResult(id=e.agent, kind="command", status="completed", attempts=1, duration_s=0.1,
                               files=paths, findings=[
                                   Finding(fingerprint=f"{e.agent}-{n}", agent=e.agent, severity="warning",
                                           category="general", file=p, line=1, message=f"finding {n}")
                                   for n, p in enumerate(paths) if n % 10 == 0])
                   for e in entries]
        report = aggregate(plan.facts, plan.classification, entries, plan.gaps, results, config,
                           run_id=runner.new_run_id(), tool_version="bench")
        store = open_store(work / "store-bench" / "state.db")
        assert store is not None
        with store:
            started = time.perf_counter()
            runs.begin(store, report.run_id, plan.facts, config_sha(config))
            reuse = plan_reuse(plan.manifest, plan.facts, config, pairs.lookup(store))
            pairs.record_planned(store, report.run_id, reuse)
            pairs.record_results(store, report.run_id, reuse, results)
            runs.finish(store, report, 0.0)
            seconds = time.perf_counter() - started
            count = store.db.execute("SELECT COUNT(*) FROM review_pairs WHERE status = 'completed'").fetchone()[0]
    except Exception as exc:  # report it, run the other benchmarks
        table.error(name, "< 0.3 s", BenchError(f"{type(exc).__name__}: {exc}"))
        return
    table.check(name, seconds, 0.3, "s", f"{count} pairs incl. {agents} scope pairs, report "
                f"{len(report.model_dump_json()) / 1e6:.1f} MB")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--keep", action="store_true",
                        help="keep the temporary directory and print its path")
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="review-gate-bench-")).resolve()
    table = Table()
    try:
        started = time.perf_counter()
        data = DiffWriter(SEED).diff(BIG_FILES, BIG_BYTES)
        big = work / "big.diff"
        big.write_bytes(data)
        small = work / "small.diff"
        small.write_bytes(small_diff(SEED + 1))
        sections = data.count(b"\ndiff --git ") + data.startswith(b"diff --git ")
        lines = data.count(b"\n")
        table.info("synthetic big.diff",
                   f"{len(data) / 1e6:.2f} MB, {sections} files, {lines} lines, "
                   f"generated in {time.perf_counter() - started:.2f} s")
        if sections != BIG_FILES or abs(len(data) - BIG_BYTES) > BIG_BYTES * SIZE_TOLERANCE:
            raise SystemExit(f"bench: generated {sections} files and {len(data)} bytes; "
                             "the generator is off target")

        bench_version(table, work)
        bench_plan(table, work, big)
        bench_pattern_scan(table, big)
        bench_concurrency(table, work, small)
        bench_full_run(table, work, big)
        bench_cached_rerun(table, work, big)
        bench_store_write(table, work, big)
        bench_llm(table, work)
    finally:
        if args.keep:
            print(f"inputs and outputs kept in {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(table.render())
    return 1 if args.strict and table.failed else 0


if __name__ == "__main__":
    sys.exit(main())
