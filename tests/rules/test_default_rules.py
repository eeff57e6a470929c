"""The built-in pattern rules, each run through the real CLI on a diff that must trip it and on
near misses that must not.

Every enabled pattern rule of config/review-rules.json needs an entry in CASES; a rule added
without one fails ``test_every_pattern_rule_has_cases``.

Secrets used as test data are assembled at run time, so this file holds no literal token that
secret scanners (this tool's own rules included) would flag.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_diff

RULES_FILE = Path(__file__).parents[2] / "config" / "review-rules.json"


@dataclass(frozen=True)
class Sample:
    path: str
    lines: tuple[str, ...]
    flagged: tuple[int, ...] | None = None  # line numbers the rule must flag; None means all
    secret: str | None = None  # text that must never appear in the report (redaction)

    def expected_lines(self) -> tuple[int, ...]:
        return self.flagged if self.flagged is not None else tuple(range(1, len(self.lines) + 1))


@dataclass(frozen=True)
class Case:
    hits: tuple[Sample, ...]
    misses: tuple[Sample, ...]


def hit(path: str, *lines: str, flagged: tuple[int, ...] | None = None, secret: str | None = None) -> Sample:
    """Lines the rule must flag (all of them, or the line numbers in ``flagged``) and no others."""
    return Sample(path, lines, flagged, secret)


def miss(path: str, *lines: str) -> Sample:
    """A near miss: the rule must flag none of these lines."""
    return Sample(path, lines, flagged=())


def case(*samples: Sample) -> Case:
    """Group samples built with ``hit`` and ``miss`` into a rule's case."""
    return Case(hits=tuple(s for s in samples if s.flagged != ()),
                misses=tuple(s for s in samples if s.flagged == ()))


def _b64(obj: dict[str, str]) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()


# Fake credentials, assembled so that the source never contains them whole.
PRIVATE_KEY = "-----BEGIN " + "OPENSSH PRIVATE KEY" + "-----"
AWS_KEY = "AKIA" + "Q7WZ3M9K2R5T8XB4"
AWS_SECRET = "a1B2c3D4/e" * 4
GITHUB_TOKEN = "ghp" + "_" + "A1b2C3d4E5" * 3 + "F6g7H8"
GITHUB_PAT = "github" + "_pat_" + "11ABCDEFG0" + "aB3dE5fG7h" * 6
GITLAB_TOKEN = "glpat" + "-" + "xY7-aB3_kL9mN2pQ4rS6"
SLACK_TOKEN = "xox" + "b-" + "123456789012-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx"
SLACK_HOOK = "https://hooks.slack.com/services/" + "T0123ABCD/B0456EFGH/" + "a1B2c3D4e5F6g7H8i9J0k1L2"
STRIPE_KEY = "sk" + "_live_" + "Z9y8X7w6V5u4T3s2R1q0P9o8"
STRIPE_TEST_KEY = "sk" + "_test_" + "Z9y8X7w6V5u4T3s2R1q0P9o8"
GOOGLE_KEY = "AI" + "za" + ("Sy0_" * 9)[:35]
NPM_TOKEN = "npm" + "_" + "a1B2c3D4e5" * 3 + "F6g7H8"
PYPI_TOKEN = "pypi" + "-AgEIcHlwaS5vcmc" + "CJGI4ZjJmOTY1" * 5
JWT = ".".join([_b64({"alg": "HS256", "typ": "JWT"}), _b64({"sub": "1234567890", "name": "Jane"}),
                "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"])
PASSWORD = "Xk9" + "mP2vLq7wZ"
URL_PASSWORD = "Tr0ub4" + "dor-3x"
API_KEY = "f81d4fae" + "7dec11d0a765"
SHA = "b4ffde65f46336ab88eb53be808477a3936bae11"

CASES: dict[str, Case] = {
    # ------------------------------------------------------------------ secrets
    "sec-private-key-01": case(
        hit("deploy/id_ed25519", PRIVATE_KEY, "b3BlbnNzaC1rZXktdjEAAAAA", flagged=(1,), secret=PRIVATE_KEY),
        miss("deploy/key.pub", "-----BEGIN PUBLIC KEY-----", "-----BEGIN CERTIFICATE-----"),
    ),
    "sec-aws-key-01": case(
        hit("settings.py", f'AWS_ACCESS_KEY_ID = "{AWS_KEY}"', secret=AWS_KEY),
        miss("settings.py", 'AWS_ACCESS_KEY_ID = os.environ["AWS_ACCESS_KEY_ID"]',
             'EXAMPLE_ID = "AKIA_EXAMPLE_KEY_ID"', f'LOWER = "{AWS_KEY.lower()}"'),
    ),
    "sec-aws-secret-01": case(
        hit("config/aws.ini", f"aws_secret_access_key = {AWS_SECRET}", secret=AWS_SECRET),
        miss("config/aws.ini", "aws_secret_access_key = ${AWS_SECRET_ACCESS_KEY}"),
    ),
    "sec-github-token-01": case(
        hit("scripts/publish.sh", f'GH_TOKEN="{GITHUB_TOKEN}"', secret=GITHUB_TOKEN),
        hit("config/ci.yml", f"github_token: {GITHUB_PAT}", secret=GITHUB_PAT),
        miss("scripts/publish.sh", 'GH_TOKEN="ghp_abc123"', 'GH_TOKEN="${{ secrets.GITHUB_TOKEN }}"'),
    ),
    "sec-gitlab-token-01": case(
        hit(".gitlab-ci.yml", f'  GITLAB_TOKEN: "{GITLAB_TOKEN}"', secret=GITLAB_TOKEN),
        miss(".gitlab-ci.yml", '  GITLAB_TOKEN: "glpat-xxxx"', "  GITLAB_TOKEN: $CI_JOB_TOKEN"),
    ),
    "sec-slack-token-01": case(
        hit("notify.py", f'client = WebClient(token="{SLACK_TOKEN}")', secret=SLACK_TOKEN),
        miss("notify.py", 'client = WebClient(token="xoxb-your-bot-token-here")'),
    ),
    "sec-slack-webhook-01": case(
        hit("notify.py", f'WEBHOOK = "{SLACK_HOOK}"', secret=SLACK_HOOK),
        miss("notify.py", 'WEBHOOK = "https://hooks.slack.com/services/XXX/YYY/ZZZ"'),
    ),
    "sec-stripe-key-01": case(
        hit("billing.py", f'stripe.api_key = "{STRIPE_KEY}"', secret=STRIPE_KEY),
        miss("billing.py", f'stripe.api_key = "{STRIPE_TEST_KEY}"', 'stripe.api_key = os.environ["STRIPE_KEY"]'),
    ),
    "sec-google-api-key-01": case(
        hit("web/maps.js", f'const mapsKey = "{GOOGLE_KEY}";', secret=GOOGLE_KEY),
        miss("web/maps.js", 'const mapsKey = "AIzaShortKey";', "const mapsKey = process.env.MAPS_KEY;"),
    ),
    "sec-package-token-01": case(
        hit(".npmrc", f"//registry.npmjs.org/:_authToken={NPM_TOKEN}", secret=NPM_TOKEN),
        hit(".pypirc", f"password = {PYPI_TOKEN}", secret=PYPI_TOKEN),
        miss(".npmrc", "//registry.npmjs.org/:_authToken=${NPM_TOKEN}", "npm_config_cache=/tmp/npm"),
    ),
    "sec-generic-secret-01": case(
        hit("app/config.py", f'DB_PASSWORD = "{PASSWORD}"', secret=PASSWORD),
        hit("src/client.ts", f'const apiKey = "{API_KEY}";', secret=API_KEY),
        hit("config/app.json", f'  "client_secret": "{PASSWORD}",', secret=PASSWORD),
        miss("app/config.py", 'DB_PASSWORD = "changeme"', 'password = os.environ["DB_PASSWORD"]',
             'api_key = "${API_KEY}"', 'password = ""', 'secret = "<your-secret-here>"',
             'PASSWORD_HASHER = "argon2id-v19"', 'if password == "hunter2hunter2":'),
        miss("tests/test_login.py", f'login(password="{PASSWORD}")'),
        miss("docs/setup.md", f'    password: "{PASSWORD}"'),
    ),
    "sec-env-secret-01": case(
        hit(".env", f"DB_PASSWORD={PASSWORD}", secret=PASSWORD),
        hit("docker-compose.yml", f"      POSTGRES_PASSWORD: {PASSWORD}", secret=PASSWORD),
        hit("deploy.sh", f"export API_TOKEN={API_KEY}", secret=API_KEY),
        miss(".env", "DB_PASSWORD=${DB_PASSWORD}", "API_KEY=changeme", "SECRET_KEY_FILE=/run/secrets/key1",
             "DB_PASSWORD=", "AUTH_TOKEN=ENC[AES256_GCM,data:abc123xyz,iv:k1]"),
        miss(".env.example", f"DB_PASSWORD={PASSWORD}"),
    ),
    "sec-jwt-01": case(
        hit("api/client.py", f'TOKEN = "{JWT}"', secret=JWT),
        miss("api/client.py", 'HEADER = "eyJhbGciOiJIUzI1NiJ9"', 'TOKEN = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0."'),
    ),
    "sec-url-credentials-01": case(
        hit("settings.py", f'DATABASE_URL = "postgres://app:{URL_PASSWORD}@db.internal:5432/app"',
            secret=URL_PASSWORD),
        miss("settings.py", 'DATABASE_URL = "postgres://app:${DB_PASSWORD}@db:5432/app"',
             'EXAMPLE = "https://user:password@example.com"', 'REMOTE = "git@github.com:org/repo.git"',
             'API = "http://localhost:8080/v1/users"'),
    ),
    # ------------------------------------------------------------------ security
    "sec-tls-verify-01": case(
        hit("client.py", "r = requests.get(url, verify=False)"),
        hit("src/api.ts", "const agent = new https.Agent({ rejectUnauthorized: false });"),
        hit("net/tls.py", "ctx.verify_mode = ssl.CERT_NONE", "ctx.check_hostname = False"),
        miss("client.py", "r = requests.get(url, verify=True)", "r = requests.get(url, verify='/etc/ssl/ca.pem')",
             "if ctx.verify_mode != ssl.CERT_NONE:"),
    ),
    "sec-py-eval-01": case(
        hit("app/calc.py", "result = eval(user_input)", "exec(code, namespace)", 'value = eval("x" + suffix)',
            "return eval(f'{a} {op} {b}')"),
        miss("app/calc.py", "value = ast.literal_eval(user_input)", "model.eval()", "def eval(self, env):",
             'total = eval("1 + 2")', "evaluator.evaluate(expr)"),
    ),
    "sec-js-eval-01": case(
        hit("src/calc.js", "const f = new Function('a', body);", "eval(payload);", 'setTimeout("tick()", 100);'),
        miss("src/calc.js", "const v = evaluate(expr);", "setTimeout(() => tick(), 100);", "vm.eval(code);"),
    ),
    "sec-shell-true-01": case(
        hit("tools/run.py", "subprocess.run(cmd, shell=True, check=True)", "    shell=True,"),
        miss("tools/run.py", 'subprocess.run(["git", "status"], shell=False, check=True)',
             "# never pass shell=True here"),
    ),
    "sec-os-system-01": case(
        hit("tools/clean.py", 'os.system(f"rm -rf {path}")', 'out = os.popen("ls " + folder).read()',
            "status = subprocess.getoutput(cmd)"),
        miss("tools/clean.py", 'os.system("clear")', 'subprocess.run(["rm", "-rf", path], check=True)'),
    ),
    "sec-child-process-01": case(
        hit("src/git.js", "exec(`git log ${branch}`, callback);", 'child_process.execSync("rm -rf " + dir);'),
        miss("src/git.js", 'execFile("git", ["log", branch], callback);', "const m = /a(b)/.exec(text + suffix);",
             'exec("git status", callback);'),
    ),
    "sec-sql-format-01": case(
        hit("app/repo.py", "cursor.execute(f\"SELECT * FROM users WHERE name = '{name}'\")",
            'cursor.execute("DELETE FROM t WHERE id = %s" % item_id)',
            "query = \"SELECT id FROM users WHERE email = '\" + email + \"'\""),
        hit("src/db.ts", "const rows = await db.query(`SELECT * FROM users WHERE id = ${id}`);"),
        hit("store/users.go", "q := fmt.Sprintf(\"SELECT * FROM users WHERE name = '%s'\", name)"),
        miss("app/repo.py", 'cursor.execute("SELECT * FROM users WHERE name = %s", (name,))',
             'log.info(f"selected {count} rows from cache")',
             'cursor.execute(sql.SQL("SELECT * FROM {}").format(sql.Identifier(table)))'),
        miss("tests/test_repo.py", "cursor.execute(f\"SELECT * FROM users WHERE name = '{name}'\")"),
    ),
    "sec-deserialize-01": case(
        hit("app/cache.py", "obj = pickle.loads(request.body)", "model = joblib.load(path)"),
        hit("src/main/java/App.java", "ObjectInputStream in = new ObjectInputStream(socket.getInputStream());"),
        miss("app/cache.py", "obj = json.loads(request.body)", "blob = pickle.dumps(obj)"),
    ),
    "sec-yaml-load-01": case(
        hit("app/conf.py", "cfg = yaml.load(fh)", "cfg = yaml.load(fh, Loader=yaml.Loader)",
            "docs = yaml.unsafe_load(text)"),
        miss("app/conf.py", "cfg = yaml.safe_load(fh)", "cfg = yaml.load(fh, Loader=yaml.SafeLoader)",
             "cfg = yaml.load(fh, Loader=yaml.CSafeLoader)"),
    ),
    "sec-weak-hash-01": case(
        hit("app/auth.py", "digest = hashlib.md5(password.encode()).hexdigest()"),
        hit("src/sign.js", "const h = crypto.createHash('sha1').update(body).digest('hex');"),
        hit("pkg/sum.go", "sum := md5.Sum(data)"),
        miss("app/auth.py", "digest = hashlib.sha256(password.encode()).hexdigest()",
             "etag = hashlib.md5(body, usedforsecurity=False).hexdigest()"),
    ),
    "sec-chmod-777-01": case(
        hit("deploy.sh", "chmod 777 /var/www/uploads", "chmod -R a+rwx /srv/data"),
        hit("app/files.py", "os.chmod(path, 0o777)"),
        hit("src/upload.js", 'fs.chmodSync(dir, "777");'),
        hit("Dockerfile", "RUN chmod -R 0777 /app"),
        miss("deploy.sh", "chmod 755 /usr/local/bin/tool", "chmod 1777 /tmp/shared", "chmod 600 ~/.ssh/id_ed25519"),
        miss("app/files.py", "os.chmod(path, 0o755)", "path.chmod(0o777 - umask)", "os.chmod(path, 0o777 & ~umask)"),
    ),
    "sec-debug-server-01": case(
        hit("app.py", "app.run(host='0.0.0.0', debug=True)"),
        hit("mysite/settings.py", "DEBUG = True"),
        miss("app.py", "app.run(host='0.0.0.0', debug=False)", 'app.run(debug=os.environ.get("FLASK_DEBUG") == "1")'),
        miss("mysite/settings/dev.py", "DEBUG = True"),
    ),
    "sec-inner-html-01": case(
        hit("src/view.js", "el.innerHTML = comment.body;", "el.innerHTML = `<b>${name}</b>`;"),
        hit("src/App.tsx", "<div dangerouslySetInnerHTML={{ __html: html }} />"),
        miss("src/view.js", "el.textContent = comment.body;", 'el.innerHTML = "";', "el.innerHTML = `<hr>`;"),
    ),
    # ------------------------------------------------------------------ hygiene
    "hyg-conflict-01": case(
        hit("app/models.py", "<<<<<<< HEAD", "x = 1", "=======", "x = 2", ">>>>>>> feature/login", flagged=(1, 5)),
        hit("README.md", "intro", "<<<<<<< ours", "a", "||||||| base", "b", ">>>>>>>", flagged=(2, 4, 6)),
        miss("app/models.py", 'MARKER = "<<<<<<< HEAD"', "<<<<<<<< eight", "# >>>>>>> quoted"),
    ),
    "hyg-conflict-02": case(
        hit("app/models.py", "x = 1", "=======", "x = 2", flagged=(2,)),
        miss("docs/index.rst", "Install", "======="),
        miss("app/models.py", "# ========", "SEPARATOR = '======='"),
    ),
    "hyg-todo-01": case(
        hit("app/service.py", "# TODO: handle retries", "x = 1  # FIXME wrong for leap years"),
        miss("app/service.py", "todo_items = load_todos()", "# Todo list view"),
    ),
    "hyg-debug-print-01": case(
        hit("app/service.py", "    print(response.json())", "pprint(payload)", 'print(f"{user=}")'),
        miss("app/service.py", "    logger.debug(response.json())", "    console.print(table)", "    self.print(x)",
             'print("usage: tool FILE", file=sys.stderr)'),
        miss("tests/test_service.py", "    print(response.json())"),
        miss("scripts/report.py", "print(summary)"),
    ),
    "hyg-pdb-01": case(
        hit("app/service.py", "import pdb; pdb.set_trace()", "    breakpoint()", "    import ipdb",
            "    pdb.set_trace()", "__import__('pdb').set_trace()"),
        hit("tests/test_service.py", "    breakpoint()"),
        miss("app/service.py", "# call breakpoint() to debug locally", "def set_breakpoint(self):",
             '    """Called upon pdb.set_trace()."""'),
    ),
    "hyg-console-log-01": case(
        hit("src/app.ts", "console.log('user', user);", "  console.debug(state);"),
        miss("src/app.test.ts", "console.log('user', user);"),
        miss("src/app.ts", "console.error('failed', err);", "logger.log('info', msg);", "// console.log(state);",
             " * console.log(example)"),
    ),
    "hyg-debugger-01": case(
        hit("src/app.js", "  debugger;", "debugger"),
        miss("src/app.js", "const debuggerEnabled = false;", "// debugger;"),
    ),
    "hyg-rust-dbg-01": case(
        hit("src/main.rs", "    let x = dbg!(compute(a));"),
        miss("src/main.rs", '    debug!("value: {}", x);'),
    ),
    "hyg-bare-except-01": case(
        hit("app/jobs.py", "try:", "    run()", "except:", "    log.exception('failed')", flagged=(3,)),
        miss("app/jobs.py", "except ValueError:", "except Exception as exc:"),
    ),
    "hyg-except-pass-01": case(
        hit("app/jobs.py", "try:", "    run()", "except Exception:", "    pass", flagged=(3,)),
        hit("app/jobs.py", "try: run()", "except Exception as exc: pass", flagged=(2,)),
        miss("app/jobs.py", "except KeyError: pass", "except Exception as exc:", "    log.warning('ignored: %s', exc)"),
    ),
    "hyg-empty-catch-01": case(
        hit("src/load.js", "try { load(); } catch (e) {}", "fetchData().catch(() => {});"),
        hit("src/main/java/Loader.java", "} catch (IOException e) {", "}", flagged=(1,)),
        miss("src/load.js", "} catch (e) { logger.warn(e); }", "fetchData().catch((err) => report(err));",
             "} catch (e) { /* optional file */ }", "const v = await load().catch(() => null);"),
    ),
    "hyg-float-money-01": case(
        hit("shop/cart.py", "total = float(order.total_price) * qty", "    unit_price: float"),
        hit("web/cart.js", "const amount = parseFloat(form.amount.value);"),
        miss("shop/cart.py", "total = Decimal(order.total_price) * qty", "ratio = float(hits) / float(attempts)",
             "elapsed = float(td.total_seconds())"),
        miss("tests/test_cart.py", "total = float(order.total_price)"),
    ),
    "hyg-focused-test-01": case(
        hit("src/app.test.ts", "it.only('renders', () => {", "fdescribe('App', () => {"),
        miss("src/app.test.ts", "it('renders', () => {", "describe('App', () => {", "model.fit(data);"),
    ),
    "hyg-skipped-test-01": case(
        hit("src/app.test.ts", "it.skip('renders', () => {", "xdescribe('App', () => {"),
        hit("tests/test_app.py", "@pytest.mark.skip", "def test_login():", flagged=(1,)),
        miss("tests/test_app.py", '@pytest.mark.skip(reason="needs a database, see #123")',
             '@pytest.mark.skipif(sys.platform == "win32", reason="posix only")'),
        miss("src/app.test.ts", "it('renders', () => {"),
    ),
    # ------------------------------------------------------------------ infrastructure
    "infra-docker-latest-01": case(
        hit("Dockerfile", "FROM node:latest"),
        hit("docker/Dockerfile.api", "FROM python AS base"),
        hit("Dockerfile", "FROM ghcr.io/acme/base"),
        miss("Dockerfile", "FROM python:3.12-slim AS build", "FROM build AS final", "FROM scratch",
             "FROM node:20@sha256:" + "a" * 64, "FROM ${BASE_IMAGE}"),
    ),
    "infra-image-latest-01": case(
        hit("docker-compose.yml", "    image: redis:latest"),
        hit("k8s/deploy.yaml", "        - image: nginx"),
        miss("docker-compose.yml", "    image: redis:7.2-alpine", '    image: "${REGISTRY}/api:${TAG}"', "    image:"),
    ),
    "infra-curl-pipe-01": case(
        hit("Dockerfile", "RUN curl -fsSL https://example.com/install.sh | bash"),
        hit(".github/workflows/ci.yml", "      - run: wget -qO- https://get.example.dev | sudo sh"),
        hit("Dockerfile", 'RUN sh -c "$(curl -fsSL https://example.com/install.sh)"'),
        hit("scripts/bootstrap.sh", "curl -fsSL https://example.com/install.sh | bash"),
        miss("Dockerfile", "RUN curl -fsSLo /tmp/install.sh https://example.com/install.sh && sha256sum -c sums",
             "RUN curl -fsSL https://example.com/key.gpg | gpg --dearmor -o /usr/share/keyrings/example.gpg"),
    ),
    "infra-privileged-01": case(
        hit("docker-compose.yml", "    privileged: true"),
        hit("k8s/pod.yaml", "        allowPrivilegeEscalation: true"),
        hit(".github/workflows/ci.yml", "      - run: docker run --privileged app"),
        miss("docker-compose.yml", "    privileged: false"),
        miss("k8s/pod.yaml", "        allowPrivilegeEscalation: false", "        hostNetwork: false"),
    ),
    "infra-gha-unpinned-01": case(
        hit(".github/workflows/ci.yml", "      - uses: actions/checkout@main",
            "      - uses: acme/deploy-action/sub@master"),
        miss(".github/workflows/ci.yml", "      - uses: actions/checkout@v4", f"      - uses: actions/checkout@{SHA}",
             "      - uses: ./.github/actions/setup"),
    ),
    "infra-gha-write-all-01": case(
        hit(".github/workflows/ci.yml", "permissions: write-all"),
        miss(".github/workflows/ci.yml", "permissions: read-all", "permissions:", "  contents: write"),
    ),
    "infra-gha-prt-01": case(
        hit(".github/workflows/label.yml", "on: pull_request_target"),
        miss(".github/workflows/ci.yml", "on: pull_request", "  pull_request:"),
    ),
    "infra-gha-injection-01": case(
        hit(".github/workflows/triage.yml", '        run: echo "${{ github.event.issue.title }}"'),
        hit(".github/workflows/triage.yml", "        run: |", '          git checkout "${{ github.head_ref }}"',
            "          echo ${{ github.event.pull_request.head.ref }}", flagged=(2, 3)),
        miss(".github/workflows/triage.yml", "        env:", "          TITLE: ${{ github.event.issue.title }}",
             '        run: echo "$TITLE"', "        if: ${{ github.event.issue.title == 'bug' }}",
             '        run: echo "${{ github.event.issue.number }}"'),
    ),
    "infra-public-bucket-01": case(
        hit("infra/s3.tf", '  acl    = "public-read"', "  block_public_acls       = false"),
        miss("infra/s3.tf", '  acl    = "private"', "  block_public_acls       = true"),
    ),
    # ------------------------------------------------------------------ migrations
    "mig-drop-table-01": case(
        hit("migrations/0042_cleanup.sql", "DROP TABLE legacy_orders;"),
        hit("app/migrations/0042_remove_legacy.py", "        migrations.DeleteModel(name='LegacyOrder'),"),
        miss("migrations/0042_cleanup.sql", "CREATE TABLE orders (id bigint PRIMARY KEY);",
             "DROP INDEX CONCURRENTLY idx_orders_old;"),
        miss("migrations/0042_orders.down.sql", "DROP TABLE orders;"),
    ),
    "mig-drop-column-01": case(
        hit("db/migrate/20240101_remove_email.sql", "ALTER TABLE users DROP COLUMN email;"),
        hit("app/migrations/0043_remove_email.py", "        migrations.RemoveField(model_name='user', name='email'),"),
        miss("migrations/0043.sql", "ALTER TABLE users ADD COLUMN email text;",
             "ALTER TABLE users DROP CONSTRAINT users_email_key;"),
    ),
    "mig-truncate-01": case(
        hit("migrations/0044.sql", "TRUNCATE TABLE sessions;", "truncate table audit_log;"),
        miss("migrations/0044.sql", "-- truncate long names to 63 characters",
             "DELETE FROM sessions WHERE expires_at < now();"),
    ),
    "mig-alter-type-01": case(
        hit("migrations/0045.sql", "ALTER TABLE orders ALTER COLUMN total TYPE numeric(12, 2);"),
        hit("alembic/versions/abc123_widen.py", "    op.alter_column('orders', 'total', type_=sa.Numeric(12, 2))"),
        miss("migrations/0045.sql", "ALTER TABLE orders ALTER COLUMN total SET DEFAULT 0;",
             "ALTER TABLE orders ALTER COLUMN note DROP NOT NULL;"),
    ),
    "mig-index-concurrently-01": case(
        hit("migrations/0046.sql", "CREATE INDEX idx_orders_user ON orders (user_id);",
            "CREATE UNIQUE INDEX IF NOT EXISTS idx_users_email ON users (email);"),
        miss("migrations/0046.sql", "CREATE INDEX CONCURRENTLY idx_orders_user ON orders (user_id);",
             "CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS idx_users_email ON users (email);"),
    ),
    "mig-rename-01": case(
        hit("migrations/0047.sql", "ALTER TABLE users RENAME COLUMN name TO full_name;"),
        hit("app/migrations/0047_rename.py", "        migrations.RenameField('user', 'name', 'full_name'),"),
        miss("migrations/0047.sql", "ALTER TABLE users ADD COLUMN full_name text;",
             "-- keep the old name until all readers move"),
    ),
    # ------------------------------------------------------------------ dependencies
    "dep-http-index-01": case(
        hit("requirements.txt", "--index-url http://pypi.internal/simple", "--trusted-host pypi.internal"),
        hit("Gemfile", 'source "http://rubygems.org"'),
        hit("Pipfile", 'url = "http://pypi.internal/simple"'),
        miss("requirements.txt", "--index-url https://pypi.org/simple", "requests==2.32.3"),
        miss("package.json", '  "homepage": "http://example.com",', '    "url": "http://github.com/acme/app.git"'),
    ),
    "dep-http-url-01": case(
        hit("requirements.txt", "internal-lib @ http://files.internal/internal_lib-1.0.tar.gz",
            f"git+http://git.internal/acme/lib.git@{SHA}"),
        hit("package.json", '    "left-pad": "http://files.internal/left-pad-1.3.0.tgz",',
            '    "acme-lib": "git://github.com/acme/lib.git",'),
        miss("requirements.txt", "internal-lib @ https://files.internal/internal_lib-1.0.tar.gz"),
        miss("package.json", '  "homepage": "http://example.com",', '    "url": "git://github.com/acme/app.git"'),
    ),
    "dep-git-unpinned-01": case(
        hit("pyproject.toml", '    "acme-lib @ git+https://github.com/acme/lib.git@main",'),
        hit("requirements.txt", "acme-lib @ git+https://github.com/acme/lib.git@main",
            "git+https://github.com/acme/lib.git#egg=acme-lib"),
        hit("package.json", '    "acme-lib": "git+https://github.com/acme/lib.git#v1.2.0",',
            '    "acme-ui": "github:acme/ui",'),
        miss("requirements.txt", f"acme-lib @ git+https://github.com/acme/lib.git@{SHA}",
             f"git+ssh://git@github.com/acme/lib.git@{SHA}#egg=acme-lib"),
        miss("package.json", f'    "acme-lib": "git+https://github.com/acme/lib.git#{SHA}",',
             f'    "acme-ui": "github:acme/ui#{SHA}",', '    "url": "git+https://github.com/acme/app.git"',
             '  "repository": "github:acme/app",'),
    ),
    "dep-wildcard-version-01": case(
        hit("package.json", '    "lodash": "*",', '    "react": "latest"'),
        hit("Cargo.toml", 'serde = "*"'),
        miss("package.json", '    "lodash": "^4.17.21",', '    "build": "tsc -p ."'),
        miss("Cargo.toml", 'serde = "1.0"', 'glob = "0.3.*"'),
    ),
}


RULES_BY_ID = {r["id"]: r for r in json.loads(RULES_FILE.read_text(encoding="utf-8"))["rules"]}


def _review(cli: Any, rule_id: str, sample: Sample) -> tuple[list[dict[str, Any]], str]:
    """Run the CLI on a diff adding ``sample``; check the rule's agent really reviewed the file."""
    diff = make_diff(sample.path, list(sample.lines))
    result = cli("--diff", "-", "--format", "json", "--filter-mode", "added", stdin=diff.encode())
    assert result.code in (0, 1), result.err
    report = result.json()
    # The built-in llm agents are skipped when their key is not set; every other agent completes.
    failed = [a for a in report["agents"] if a["status"] != "completed"
              and not (a["kind"] == "llm" and a["status"] == "skipped" and not a["required"])]
    assert not failed, failed
    agent = RULES_BY_ID[rule_id]["agent"]
    routed = [e for e in report["manifest"] if e["agent"] == agent and sample.path in e["files"]]
    assert routed, f"{rule_id}: agent {agent} is not dispatched on {sample.path}"
    return report["findings"], result.out


def _flagged_lines(findings: list[dict[str, Any]], rule_id: str, path: str) -> set[int]:
    return {f["line"] for f in findings if f["rule_id"] == rule_id and f["file"] == path}


HITS = [pytest.param(rule_id, sample, id=f"{rule_id}-{i}")
        for rule_id, c in CASES.items() for i, sample in enumerate(c.hits)]
MISSES = [pytest.param(rule_id, sample, id=f"{rule_id}-{i}")
          for rule_id, c in CASES.items() for i, sample in enumerate(c.misses)]


@pytest.mark.parametrize(("rule_id", "sample"), HITS)
def test_rule_flags_its_positive_sample(cli: Any, rule_id: str, sample: Sample) -> None:
    findings, out = _review(cli, rule_id, sample)
    flagged = _flagged_lines(findings, rule_id, sample.path)
    assert flagged == set(sample.expected_lines()), (
        f"{rule_id} flagged lines {sorted(flagged)} of {sample.path}, expected {list(sample.expected_lines())}")
    if sample.secret is not None:
        # The report's rule catalogue may quote a key header in its description; findings may not.
        report = json.loads(out)
        assert sample.secret not in json.dumps([report["findings"], report["agents"]]), (
            f"{rule_id}: the secret leaked into the report")


@pytest.mark.parametrize(("rule_id", "sample"), MISSES)
def test_rule_ignores_its_near_misses(cli: Any, rule_id: str, sample: Sample) -> None:
    findings, _ = _review(cli, rule_id, sample)
    wrong = [f for f in findings if f["rule_id"] == rule_id]
    assert not wrong, f"{rule_id} flagged a near miss: {wrong}"


def test_every_pattern_rule_has_cases() -> None:
    active = {r["id"] for r in RULES_BY_ID.values() if r.get("enabled", True) and r.get("pattern")}
    assert sorted(active - CASES.keys()) == [], "rules without test cases"
    assert sorted(CASES.keys() - active) == [], "test cases for rules that are gone or disabled"
    for rule_id in active:
        assert CASES[rule_id].hits and CASES[rule_id].misses, f"{rule_id} needs a positive and a near-miss sample"


def test_secrets_rules_are_redacted_and_tested_for_leaks() -> None:
    for rule in RULES_BY_ID.values():
        if rule["agent"] == "secrets-scanner":
            assert rule.get("redact") is True, f"{rule['id']} must set redact: true"
            assert all(s.secret for s in CASES[rule["id"]].hits), f"{rule['id']}: give each hit its secret"


def test_committed_credentials_fail_the_gate() -> None:
    """A credential in git is usable by whoever reads it: every secret rule is critical, so the gate fails."""
    for rule in RULES_BY_ID.values():
        if rule["agent"] == "secrets-scanner" or rule["category"] == "secrets":
            assert rule["severity"] == "critical", f"{rule['id']} is {rule['severity']}"


def test_rules_are_documented() -> None:
    for rule in RULES_BY_ID.values():
        for key in ("description", "detection", "recommendation"):
            assert len(rule[key].strip()) >= 20, f"{rule['id']}: {key} is too thin"
        assert rule.get("confidence") is not None, f"{rule['id']}: set a confidence"


def _example_path(glob: str) -> str:
    """A file name the gitignore-style ``glob`` selects: ``**/tests/**`` -> ``tests/a``."""
    path = glob.removeprefix("**/").replace("**", "a").replace("*", "x").replace("?", "x")
    return path.rstrip("/") or "x"


@pytest.mark.parametrize("rule", [pytest.param(r, id=r["id"]) for r in RULES_BY_ID.values() if r.get("paths")])
def test_every_rule_path_is_routed_to_the_rule_agent(cli: Any, rule: dict[str, Any]) -> None:
    """A rule whose agent the composition never dispatches on a file it targets is dead weight."""
    for glob in rule["paths"]:
        path = _example_path(glob)
        diff = make_diff(path, ["x"])
        report = cli("--diff", "-", "--format", "json", "--filter-mode", "added", stdin=diff.encode()).json()
        routed = {e["agent"] for e in report["manifest"] if path in e["files"]}
        assert rule["agent"] in routed, f"{rule['id']}: {rule['agent']} never reviews {path} (from {glob!r})"
