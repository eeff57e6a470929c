"""A deterministic synthetic git diff for the benchmarks: many languages and paths that match
the built-in domains, new, modified and deleted files, and about one line in FLAG_EVERY that a
built-in rule may flag."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

FLAG_EVERY = 200  # about one line in this many is one the built-in rules may flag

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
        """``total`` paths, each kind's share as in KINDS (which counts 600): scaled, the largest
        kind taking what rounding leaves over."""
        base = sum(k.count for k in KINDS)
        counts = [round(k.count * total / base) for k in KINDS]
        counts[max(range(len(KINDS)), key=lambda i: KINDS[i].count)] += total - sum(counts)
        out: list[tuple[Kind, str]] = []
        seen: set[str] = set()
        for kind, count in zip(KINDS, counts, strict=True):
            for i in range(count):
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
    picks = [(k, p) for k, p in writer.paths(600) if k.name in wanted]
    seen: set[str] = set()
    sections = []
    for kind, path in picks:
        if kind.name not in seen:
            seen.add(kind.name)
            sections.append(writer.file(kind, path, 1500))
    return "".join(sections).encode("utf-8")
