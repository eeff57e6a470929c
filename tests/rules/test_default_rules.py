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
import random
import re
import string
import uuid
from collections import Counter
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
    removed: tuple[str, ...] = ()  # lines the change removes from the file first (a changed, not a new, file)

    def expected_lines(self) -> tuple[int, ...]:
        return self.flagged if self.flagged is not None else tuple(range(1, len(self.lines) + 1))


@dataclass(frozen=True)
class Case:
    hits: tuple[Sample, ...]
    misses: tuple[Sample, ...]


def hit(path: str, *lines: str, flagged: tuple[int, ...] | None = None, secret: str | None = None,
        removed: tuple[str, ...] = ()) -> Sample:
    """Lines the rule must flag (all of them, or the line numbers in ``flagged``) and no others;
    ``removed``: lines they replace (a modified file)."""
    return Sample(path, lines, flagged, secret, removed)


def miss(path: str, *lines: str, removed: tuple[str, ...] = ()) -> Sample:
    """A near miss: the rule must flag none of these lines."""
    return Sample(path, lines, flagged=(), removed=removed)


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
SHA_DIGIT = "8e5e7e5ab8b370d6c329ec480221332ada57f0ab"

HEX = "0123456789abcdef"
UPPER_DIGITS = string.ascii_uppercase + string.digits
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "_-"


def fake(alphabet: str, length: int, seed: int) -> str:
    """A deterministic random-looking token body, so no test token is written out in the source."""
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(length))


def fake_uuid(seed: int) -> str:
    return str(uuid.UUID(int=random.Random(seed).getrandbits(128)))


GITLAB_RUNNER = "glrt" + "-" + fake(URLSAFE, 20, 101)
GITLAB_TRIGGER = "glptt" + "-" + fake(HEX, 40, 102)
SLACK_APP = "xapp" + "-1-" + "A0123BCDEFG-" + "1234567890123-" + fake(HEX, 64, 103)
TWILIO_KEY = "S" + "K" + fake(HEX, 32, 1)
TWILIO_SID = "A" + "C" + fake(HEX, 32, 2)
SENDGRID = "S" + "G." + fake(URLSAFE, 22, 3) + "." + fake(URLSAFE, 43, 4)
MAILCHIMP = fake(HEX, 32, 5) + "-u" + "s14"
MAILGUN = "key" + "-" + fake(HEX, 32, 6)
MAILGUN_NEW = fake(HEX, 32, 7) + "-" + fake(HEX, 8, 8) + "-" + fake(HEX, 8, 9)
SHOPIFY = "shp" + "at_" + fake(HEX, 32, 10)
SQUARE = "sq0" + "atp-" + fake(ALNUM, 22, 11)
SQUARE_PROD = "EA" + "AA" + fake(URLSAFE, 59, 12) + "x"
HEROKU = "HRKU" + "-AA" + fake(URLSAFE, 57, 13) + "z"
HEROKU_UUID = fake_uuid(14)
DIGITALOCEAN = "dop" + "_v1_" + fake(HEX, 64, 15)
DOPPLER = "dp" + ".pt." + fake(ALNUM, 43, 16)
VAULT = "hv" + "s." + fake(URLSAFE, 94, 17) + "Q"
TERRAFORM_CLOUD = fake(HEX, 14, 18) + ".atlas" + "v1." + fake(string.ascii_lowercase + string.digits, 65, 19)
AGE_KEY = "AGE-SECRET" + "-KEY-1" + fake("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58, 20)
AGE_PUBLIC = "age" + "1" + fake("qpzry9x8gf2tvdw0s3jn54khce6mua7l", 58, 21)
OPENAI = "sk-" + "proj-" + fake(URLSAFE, 123, 22) + "A"
OPENAI_LEGACY = "sk-" + fake(ALNUM, 20, 23) + "T3Blbk" + "FJ" + fake(ALNUM, 20, 24)
ANTHROPIC = "sk-ant-" + "api03-" + fake(URLSAFE, 93, 25) + "AA"
HUGGINGFACE = "hf" + "_" + fake(string.ascii_letters, 34, 26)
AZURE_STORAGE = "Q" + fake(ALNUM + "+/", 85, 27) + "=="
AZURE_SB = fake(ALNUM + "+/", 43, 28) + "="
# The storage emulator's published development key (learn.microsoft.com, "Azurite"): public, not a secret.
AZURITE_KEY = ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq"
               + "/K1SZFPTOtr/KBHBeksoGMGw" + "==")
AZURE_AD = fake(ALNUM, 3, 29) + "8" + "Q~" + fake(ALNUM + "_~.-", 33, 30) + "x"
DISCORD_HOOK = "https://discord.com/api/" + "webhooks/" + "1234567890123456789/" + fake(URLSAFE, 68, 31)
TEAMS_HOOK = ("https://acme.webhook.office.com/" + "webhookb2/" + fake_uuid(32) + "@" + fake_uuid(33)
              + "/IncomingWebhook/" + fake(HEX, 32, 34) + "/" + fake_uuid(35))
GCHAT_TOKEN = fake(URLSAFE, 43, 37)
GCHAT_HOOK = ("https://chat.googleapis.com/v1/spaces/AAAA1234567/messages?key=" + "AI" + "za"
              + fake(URLSAFE, 35, 36) + "&token=" + GCHAT_TOKEN)
TELEGRAM = "7123456789" + ":" + "AA" + fake(URLSAFE, 32, 38) + "q"
DATABRICKS = "da" + "pi" + fake(HEX, 32, 39)
ATLASSIAN = "ATATT" + "3" + fake(URLSAFE, 185, 40) + "0"
GRAFANA_SA = "glsa" + "_" + fake(ALNUM, 32, 41) + "_" + fake(HEX, 8, 42)
GRAFANA_CLOUD = "glc" + "_" + fake(ALNUM + "+/", 60, 43) + "=="
SENTRY = "sntryu" + "_" + fake(HEX, 64, 44)
NEW_RELIC = "NRAK" + "-" + fake(UPPER_DIGITS, 27, 45)
DYNATRACE = "dt0c01" + "." + fake(UPPER_DIGITS, 24, 46) + "." + fake(UPPER_DIGITS, 64, 47)
LINEAR = "lin_api" + "_" + fake(ALNUM, 40, 48)
POSTMAN = "PMAK" + "-" + fake(HEX, 24, 49) + "-" + fake(HEX, 34, 50)
PULUMI = "pul" + "-" + fake(HEX, 40, 51)
RUBYGEMS = "rubygems" + "_" + fake(HEX, 48, 52)
PERPLEXITY = "pplx" + "-" + fake(ALNUM, 48, 53)
ALIBABA = "LT" + "AI" + fake(ALNUM, 20, 54)
BEARER = fake(URLSAFE, 39, 55) + "k"
K8S_VALUE = base64.b64encode(PASSWORD.encode()).decode()

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
        hit("config/runner.toml", f'  token = "{GITLAB_RUNNER}"', secret=GITLAB_RUNNER),
        hit("scripts/trigger.sh", f"curl -X POST -F token={GITLAB_TRIGGER} -F ref=main $URL", secret=GITLAB_TRIGGER),
        miss(".gitlab-ci.yml", '  GITLAB_TOKEN: "glpat-xxxx"', "  GITLAB_TOKEN: $CI_JOB_TOKEN",
             '  token = "glrt-REPLACE_ME"'),
    ),
    "sec-slack-token-01": case(
        hit("notify.py", f'client = WebClient(token="{SLACK_TOKEN}")', secret=SLACK_TOKEN),
        hit("socket_mode.py", f'APP_TOKEN = "{SLACK_APP}"', secret=SLACK_APP),
        miss("notify.py", 'client = WebClient(token="xoxb-your-bot-token-here")', 'APP_TOKEN = "xapp-1-..."'),
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
    "sec-twilio-key-01": case(
        hit("notify/sms.py", f'TWILIO_API_KEY = "{TWILIO_KEY}"', secret=TWILIO_KEY),
        miss("notify/sms.py", f'TWILIO_ACCOUNT_SID = "{TWILIO_SID}"', f'TWILIO_API_KEY = "{TWILIO_KEY[:20]}"',
             'TWILIO_API_KEY = os.environ["TWILIO_API_KEY"]'),
    ),
    "sec-sendgrid-key-01": case(
        hit("app/mail.py", f'SENDGRID_API_KEY = "{SENDGRID}"', secret=SENDGRID),
        miss("app/mail.py", 'SENDGRID_API_KEY = "SG.your-sendgrid-api-key"', "sg.send(message)"),
    ),
    "sec-mailchimp-key-01": case(
        hit("app/newsletter.py", f'MAILCHIMP_KEY = "{MAILCHIMP}"', secret=MAILCHIMP),
        miss("app/newsletter.py", f'ETAG = "{fake(HEX, 32, 5)}"', 'MAILCHIMP_KEY = "<api-key>-us6"'),
    ),
    "sec-mailgun-key-01": case(
        hit("app/mail.py", f'MAILGUN_API_KEY = "{MAILGUN}"', secret=MAILGUN),
        hit("config/mail.yml", f"mailgun_key: {MAILGUN_NEW}", secret=MAILGUN_NEW),
        miss("app/mail.py", 'MAILGUN_API_KEY = os.environ["MAILGUN_API_KEY"]',
             f'cache_key = "key-{fake(HEX, 32, 56)}"'),
    ),
    "sec-shopify-token-01": case(
        hit("shop/client.py", f'SHOPIFY_TOKEN = "{SHOPIFY}"', secret=SHOPIFY),
        miss("shop/client.py", 'SHOPIFY_TOKEN = "shpat_xxxxxxxxxxxxxxxx"',
             'SHOPIFY_TOKEN = os.environ["SHOPIFY_TOKEN"]'),
    ),
    "sec-square-token-01": case(
        hit("pay/square.py", f'SQUARE_TOKEN = "{SQUARE}"', secret=SQUARE),
        hit("pay/square.js", f"const token = '{SQUARE_PROD}';", secret=SQUARE_PROD),
        miss("pay/square.py", 'SQUARE_APP_ID = "sq0idp-abc123"', 'SQUARE_TOKEN = "EAAAxxxxxxxx"'),
    ),
    "sec-heroku-key-01": case(
        hit("deploy.sh", f"export HEROKU_API_KEY={HEROKU_UUID}", secret=HEROKU_UUID),
        hit("deploy.py", f'token = "{HEROKU}"', secret=HEROKU),
        miss("deploy.py", f'HEROKU_APP_ID = "{HEROKU_UUID}"', 'HEROKU_API_KEY = os.environ["HEROKU_API_KEY"]'),
    ),
    "sec-digitalocean-token-01": case(
        hit("infra/do.tf", f'  token = "{DIGITALOCEAN}"', secret=DIGITALOCEAN),
        miss("infra/do.tf", '  token = "dop_v1_REPLACE_ME"', "  token = var.do_token"),
    ),
    "sec-doppler-token-01": case(
        hit("scripts/env.sh", f"export DOPPLER_TOKEN={DOPPLER}", secret=DOPPLER),
        miss("scripts/env.sh", "export DOPPLER_TOKEN=dp.pt.your-token",
             'export DOPPLER_TOKEN="$(cat /run/secrets/doppler)"'),
    ),
    "sec-hashicorp-token-01": case(
        hit("scripts/vault.sh", f"export VAULT_TOKEN={VAULT}", secret=VAULT),
        hit("infra/backend.tf", f'  token = "{TERRAFORM_CLOUD}"', secret=TERRAFORM_CLOUD),
        miss("scripts/vault.sh", "export VAULT_TOKEN=hvs.CAESIJ", "export VAULT_ADDR=https://vault.internal:8200"),
    ),
    "sec-age-key-01": case(
        hit("keys.txt", "# created: 2024-06-01T10:00:00Z", AGE_KEY, flagged=(2,), secret=AGE_KEY),
        miss(".sops.yaml", f"      age: {AGE_PUBLIC}", "# public key: age1..."),
    ),
    "sec-openai-key-01": case(
        hit("app/llm.py", f'OPENAI_API_KEY = "{OPENAI}"', secret=OPENAI),
        hit("app/llm.py", f'client = OpenAI(api_key="{OPENAI_LEGACY}")', secret=OPENAI_LEGACY),
        miss("app/llm.py", 'OPENAI_API_KEY = "sk-proj-your-key-here"', f'OTHER_KEY = "sk-{fake(HEX, 32, 57)}"',
             'client = OpenAI(api_key=os.environ["OPENAI_API_KEY"])'),
    ),
    "sec-anthropic-key-01": case(
        hit("app/llm.py", f'ANTHROPIC_API_KEY = "{ANTHROPIC}"', secret=ANTHROPIC),
        miss("app/llm.py", 'ANTHROPIC_API_KEY = "sk-ant-api03-..."', f'KEY_PREFIX = "{ANTHROPIC[:60]}"'),
    ),
    "sec-huggingface-token-01": case(
        hit("train.py", f'login(token="{HUGGINGFACE}")', secret=HUGGINGFACE),
        miss("train.py", "from huggingface_hub import hf_hub_download", 'HF_TOKEN = "hf_xxx"',
             'login(token=os.environ["HF_TOKEN"])'),
    ),
    "sec-azure-storage-key-01": case(
        hit("app/storage.py", "CONN = \"DefaultEndpointsProtocol=https;AccountName=acme;"
            f'AccountKey={AZURE_STORAGE};EndpointSuffix=core.windows.net"', secret=AZURE_STORAGE),
        hit("app/bus.py", 'BUS = "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=Root;'
            f'SharedAccessKey={AZURE_SB}"', secret=AZURE_SB),
        miss("docker-compose.yml", "      AZURE_STORAGE: DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;"
             f"AccountKey={AZURITE_KEY};BlobEndpoint=http://azurite:10000/devstoreaccount1;",
             "      AZURE_STORAGE: UseDevelopmentStorage=true", "      AZURE_KEY: AccountKey=${STORAGE_KEY}"),
    ),
    "sec-azure-ad-secret-01": case(
        hit("app/auth.py", f'AZURE_CLIENT_SECRET = "{AZURE_AD}"', secret=AZURE_AD),
        miss("app/auth.py", 'AZURE_CLIENT_SECRET = os.environ["AZURE_CLIENT_SECRET"]', f'PREFIX = "{AZURE_AD[:20]}"'),
    ),
    "sec-chat-webhook-01": case(
        hit("notify.py", f'DISCORD = "{DISCORD_HOOK}"', secret=DISCORD_HOOK),
        hit("notify.py", f'TEAMS = "{TEAMS_HOOK}"', secret=TEAMS_HOOK),
        hit("notify.py", f'GCHAT = "{GCHAT_HOOK}"', secret=GCHAT_TOKEN),
        miss("notify.py", 'DISCORD = "https://discord.com/api/webhooks/<id>/<token>"',
             'TEAMS = os.environ["TEAMS_WEBHOOK"]', 'DOCS = "https://discord.com/developers/docs/resources/webhook"'),
    ),
    "sec-telegram-token-01": case(
        hit("bot.py", f'bot = Bot(token="{TELEGRAM}")', secret=TELEGRAM),
        miss("bot.py", 'bot = Bot(token=os.environ["TELEGRAM_TOKEN"])', 'WHEN = "12345678:AA"'),
    ),
    "sec-databricks-token-01": case(
        hit("jobs/run.py", f'DATABRICKS_TOKEN = "{DATABRICKS}"', secret=DATABRICKS),
        miss("jobs/run.py", f'DATABRICKS_TOKEN = "dapi{fake(HEX, 31, 58)}"',
             'DATABRICKS_HOST = "https://dbc-1234.cloud.databricks.com"'),
    ),
    "sec-atlassian-token-01": case(
        hit("scripts/jira.sh", f"export JIRA_API_TOKEN={ATLASSIAN}", secret=ATLASSIAN),
        miss("scripts/jira.sh", "export JIRA_API_TOKEN=ATATT3xFfGF0-REPLACE-ME"),
    ),
    "sec-grafana-token-01": case(
        hit("ops/grafana.py", f'GRAFANA_TOKEN = "{GRAFANA_SA}"', secret=GRAFANA_SA),
        hit("ops/grafana.py", f'CLOUD_TOKEN = "{GRAFANA_CLOUD}"', secret=GRAFANA_CLOUD),
        miss("ops/grafana.py", 'GRAFANA_TOKEN = "glsa_xxx"', 'GRAFANA_URL = "https://grafana.internal"'),
    ),
    "sec-monitoring-token-01": case(
        hit("ops/monitor.py", f'SENTRY_TOKEN = "{SENTRY}"', secret=SENTRY),
        hit("ops/monitor.py", f'NEW_RELIC_KEY = "{NEW_RELIC}"', secret=NEW_RELIC),
        hit("ops/monitor.py", f'DT_TOKEN = "{DYNATRACE}"', secret=DYNATRACE),
        miss("ops/monitor.py", 'SENTRY_DSN = os.environ["SENTRY_DSN"]', 'NEW_RELIC_KEY = "NRAK-XXXX"'),
    ),
    "sec-devplatform-token-01": case(
        hit("scripts/tokens.sh", f"export LINEAR_API_KEY={LINEAR}", secret=LINEAR),
        hit("scripts/tokens.sh", f"export POSTMAN_API_KEY={POSTMAN}", secret=POSTMAN),
        hit("scripts/tokens.sh", f"export PULUMI_ACCESS_TOKEN={PULUMI}", secret=PULUMI),
        hit("scripts/tokens.sh", f"export GEM_HOST_API_KEY={RUBYGEMS}", secret=RUBYGEMS),
        hit("app/llm.py", f'PPLX_KEY = "{PERPLEXITY}"', secret=PERPLEXITY),
        miss("scripts/tokens.sh", 'export PULUMI_ACCESS_TOKEN="$(pass show pulumi)"',
             "export LINEAR_API_URL=https://api.linear.app/graphql"),
    ),
    "sec-alibaba-key-01": case(
        hit("app/oss.py", f'ACCESS_KEY_ID = "{ALIBABA}"', secret=ALIBABA),
        miss("app/oss.py", 'ACCESS_KEY_ID = "LTAI****************"', 'ACCESS_KEY_ID = os.environ["ALIBABA_KEY_ID"]'),
    ),
    "sec-k8s-secret-01": case(
        hit("k8s/db-secret.yaml", "apiVersion: v1", "kind: Secret", "metadata:", "  name: db", "type: Opaque", "data:",
            f"  password: {K8S_VALUE}", flagged=(2,), secret=K8S_VALUE),
        miss("helm/templates/secret.yaml", "kind: Secret", "metadata:", "  name: db", "data:",
             "  password: {{ .Values.db.password | b64enc }}"),
        miss("k8s/app.yaml", "kind: Secret", "metadata:", "  name: external", "---", "kind: ConfigMap", "data:",
             "  mode: production-mode"),
        miss("k8s/external.yaml", "kind: ExternalSecret", "spec:", "data:", "  - secretKey: password"),
    ),
    "sec-netrc-password-01": case(
        hit(".netrc", "machine github.com", "login octocat", f"password {PASSWORD}", flagged=(3,), secret=PASSWORD),
        hit(".netrc", f"machine upload.pypi.org login __token__ password {PASSWORD}", secret=PASSWORD),
        miss(".netrc", "machine github.com", "login octocat", "password $GITHUB_TOKEN"),
    ),
    "sec-auth-header-01": case(
        hit("scripts/deploy.sh", f'curl -H "Authorization: Bearer {BEARER}" https://api.example.com/deploy',
            secret=BEARER),
        hit("app/client.py", f'HEADERS = {{"Authorization": "Bearer {BEARER}"}}', secret=BEARER),
        hit("scripts/fetch.sh", f"curl -u deploy:{URL_PASSWORD} https://repo.internal/api", secret=URL_PASSWORD),
        miss("scripts/deploy.sh", 'curl -H "Authorization: Bearer $API_TOKEN" https://api.example.com',
             'curl -u "$REPO_USER:$REPO_PASSWORD" https://repo.internal/api',
             'headers = {"Authorization": f"Bearer {token}"}'),
        miss("tests/test_client.py", f'HEADERS = {{"Authorization": "Bearer {BEARER}"}}'),
    ),
    # ------------------------------------------------------------------ security
    "sec-tls-verify-01": case(
        hit("client.py", "r = requests.get(url, verify=False)"),
        hit("src/api.ts", "const agent = new https.Agent({ rejectUnauthorized: false });"),
        hit("net/tls.py", "ctx.verify_mode = ssl.CERT_NONE", "ctx.check_hostname = False"),
        hit("client.py", "r = requests.get(u, verify=0)", 'kw = {"verify": False}', "session.verify = False",
            "opts = dict(verify=False)"),
        miss("client.py", "r = requests.get(url, verify=True)", "r = requests.get(url, verify='/etc/ssl/ca.pem')",
             "if ctx.verify_mode != ssl.CERT_NONE:", "r = requests.get(u, verify=1)", 'kw = {"verify": True}',
             "retries = dict(verify=10)"),
        hit("k8s/apiservice.yaml", "  insecureSkipTLSVerify: true"),
        hit("src/fetch.c", "  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);"),
        hit("lib/client.rb", "    http.verify_mode = OpenSSL::SSL::VERIFY_NONE"),
        hit("src/client.rs", "        .danger_accept_invalid_certs(true)"),
        hit("Net/Client.cs", "    handler.ServerCertificateCustomValidationCallback = (m, c, ch, e) => true;"),
        hit("src/http.php", "    curl_setopt($ch, CURLOPT_SSL_VERIFYPEER, false);"),
        hit("app/fetch.py", "    connector = aiohttp.TCPConnector(ssl=False)",
            "    async with session.get(url, ssl=False) as resp:", "    conn = TCPConnector(verify_ssl=False)"),
        miss("app/fetch.py", "    redis = Redis(host, use_ssl=False)",
             "    pool = await asyncpg.create_pool(dsn, ssl=False)",
             "    connector = aiohttp.TCPConnector(ssl=ssl_context)"),
        hit("src/main/java/Http.java", "    ctx.trustManager(InsecureTrustManagerFactory.INSTANCE);",
            "    builder.loadTrustMaterial(null, new TrustAllStrategy());",
            "  public void checkServerTrusted(X509Certificate[] chain, String authType) {}"),
        miss("src/main/java/Http.java", "    builder.loadTrustMaterial(trustStore, null);",
             "  public void checkServerTrusted(X509Certificate[] chain, String type) throws CertificateException {"),
        miss("src/fetch.c", "  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);"),
        miss("k8s/apiservice.yaml", "  insecureSkipTLSVerify: false"),
        miss("src/client.rs", "        .danger_accept_invalid_certs(false)"),
    ),
    "sec-py-eval-01": case(
        hit("app/calc.py", "result = eval(user_input)", "exec(code, namespace)", 'value = eval("x" + suffix)',
            "return eval(f'{a} {op} {b}')", "__builtins__.eval(input())", "x = builtins.exec(code)",
            "run = eval", "handlers = [eval, print]"),
        miss("app/calc.py", "value = ast.literal_eval(user_input)", "model.eval()", "def eval(self, env):",
             'total = eval("1 + 2")', "evaluator.evaluate(expr)", "mode = evaluation", "run = eval_step",
             "builtins.print(x)", "e = self.eval"),
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
    "sec-c-command-01": case(
        hit("src/run.c", "  system(command);"),
        hit("src/shell.cpp", '  FILE *pipe = popen(cmd.c_str(), "r");'),
        hit("src/clean.cc", '  std::system(("rm -rf " + dir).c_str());'),
        miss("src/run.c", '  system("clear");', "  ui->system(x);", "int file_system(void) {",
             '  popen("ls", "r");'),
    ),
    "sec-ruby-command-01": case(
        hit("app/tasks.rb", '  system("git log #{ref}")'),
        hit("app/convert.rb", "  out = `convert #{path} out.png`"),
        hit("app/calc.rb", "  eval(params[:code])"),
        miss("app/tasks.rb", "  system('git', 'log', ref)", '  system("make test")', '  name = "Hello #{user}"'),
    ),
    "sec-php-command-01": case(
        hit("src/run.php", '  system("convert " . $file);'),
        hit("src/shell.php", "  $out = shell_exec($cmd);"),
        hit("src/calc.php", "  eval($code);"),
        miss("src/run.php", "  $pdo->exec($sql);", '  system("ls -la");', "  $this->exec($job);",
             "  exec('whoami');"),
    ),
    "sec-dotnet-command-01": case(
        hit("Tools/Runner.cs", '        Process.Start("cmd.exe", "/c " + userInput);'),
        hit("Tools/Git.cs", '        var info = new ProcessStartInfo("git", $"log {reference}");'),
        miss("Tools/Runner.cs", '        Process.Start("notepad.exe");',
             '        var info = new ProcessStartInfo("git") { ArgumentList = { "log" } };'),
    ),
    "sec-jvm-command-01": case(
        hit("src/main/java/Run.java", '        Runtime.getRuntime().exec("ping " + host);'),
        hit("src/main/kotlin/Run.kt", '    Runtime.getRuntime().exec("ping $host")'),
        hit("src/main/kotlin/Shell.kt", '    val p = ProcessBuilder("sh", "-c", command).start()'),
        miss("src/main/java/Run.java", '        Runtime.getRuntime().exec(new String[]{"ping", host});',
             '        new ProcessBuilder("git", "log", ref).start();'),
    ),
    "sec-rust-command-01": case(
        hit("src/run.rs", '    let out = Command::new("sh").arg("-c").arg(&cmd).output()?;'),
        hit("src/script.rs", '    Command::new("bash")', '        .args(["-c", &script])', flagged=(1,)),
        miss("src/run.rs", '    Command::new("git").arg("log").output()?;',
             '    Command::new("sh").arg("script.sh");'),
    ),
    "sec-swift-command-01": case(
        hit("Sources/App/Shell.swift", '        task.arguments = ["-c", "ls \\(directory)"]'),
        hit("Sources/App/Run.swift", '        process.arguments = ["-c", command]'),
        miss("Sources/App/Shell.swift", '        task.arguments = ["-c", "ls -la"]',
             '        task.arguments = ["status"]'),
    ),
    "sec-sql-interpolated-01": case(
        hit("app/models/user.rb", "    User.where(\"name = '#{name}'\")"),
        hit("src/db.php", '  $r = mysqli_query($conn, "SELECT * FROM users WHERE id = $id");'),
        hit("src/repo.php", "  $stmt = $pdo->query('SELECT * FROM t WHERE id = ' . $id);"),
        hit("Data/Repo.cs", "        var cmd = new SqlCommand($\"SELECT * FROM Users WHERE Name = '{name}'\", conn);"),
        hit("src/db.rs", '    sqlx::query(&format!("SELECT * FROM users WHERE id = {}", id))'),
        hit("src/db.c", "    snprintf(sql, sizeof sql, \"SELECT * FROM users WHERE name = '%s'\", name);"),
        miss("app/models/user.rb", '    User.where("name = ?", name)'),
        miss("src/db.php", '  $stmt = $pdo->prepare("SELECT * FROM users WHERE id = ?");'),
        miss("Data/Repo.cs", '        var cmd = new SqlCommand("SELECT * FROM Users WHERE Name = @name", conn);'),
        miss("src/db.rs", '    sqlx::query("SELECT * FROM users WHERE id = $1").bind(id)'),
        miss("src/db.c", '    snprintf(buf, sizeof buf, "%s: %d", name, count);'),
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
    "sec-jwt-verify-off-01": case(
        hit("api/auth.py", 'claims = jwt.decode(token, options={"verify_signature": False})',
            "claims = jwt.decode(token, key, verify=False)", 'claims = jwt.decode(token, key, algorithms=["none"])'),
        hit("src/auth.ts", "jwt.verify(token, key, { algorithms: ['none'] });",
            "const opts = { ignoreExpiration: true };"),
        miss("api/auth.py", 'claims = jwt.decode(token, key, algorithms=["RS256"])',
             "header = jwt.get_unverified_header(token)",
             'claims = jwt.decode(token, key, options={"verify_signature": True})'),
        miss("tests/test_auth.py", 'claims = jwt.decode(token, options={"verify_signature": False})'),
    ),
    "sec-assert-auth-01": case(
        hit("app/views.py", "    assert request.user.is_authenticated", "    assert user.is_admin, 'admins only'",
            "    assert has_permission(user, 'delete')"),
        miss("app/views.py", "    assert isinstance(user, User)", "    if not user.is_admin:",
             "        raise PermissionDenied", "    # assert user.is_admin", "    assert len(roles) == 2"),
        miss("tests/test_views.py", "    assert user.is_admin"),
    ),
    "sec-csrf-disabled-01": case(
        hit("app/views.py", "@csrf_exempt", "def webhook(request):", flagged=(1,)),
        hit("app/config.py", "WTF_CSRF_ENABLED = False"),
        hit("src/main/java/SecurityConfig.java", "        http.csrf().disable();",
            "        http.csrf(AbstractHttpConfigurer::disable);", "        http.csrf(csrf -> csrf.disable());"),
        miss("app/views.py", "@csrf_protect", "WTF_CSRF_ENABLED = True", "# @csrf_exempt would be wrong here"),
        miss("src/main/java/SecurityConfig.java", "        http.csrf(Customizer.withDefaults());"),
    ),
    "sec-cors-credentials-01": case(
        hit("app/main.py", "app.add_middleware(", "    CORSMiddleware,", '    allow_origins=["*"],',
            "    allow_credentials=True,", ")", flagged=(3,)),
        hit("src/server.js", "app.use(cors({ origin: true, credentials: true }));"),
        hit("mysite/settings.py", "CORS_ALLOW_CREDENTIALS = True", "CORS_ALLOW_ALL_ORIGINS = True", flagged=(1,)),
        hit("app/__init__.py", "CORS(app, supports_credentials=True)"),
        miss("app/main.py", '    allow_origins=["https://app.example.com"],', "    allow_credentials=True,"),
        miss("app/main.py", '    allow_origins=["*"],', "    allow_credentials=False,"),
        miss("src/server.js", "app.use(cors({ origin: '*' }));", "axios.get(url, { withCredentials: true });"),
    ),
    "sec-cookie-insecure-01": case(
        hit("mysite/settings.py", "SESSION_COOKIE_SECURE = False", "CSRF_COOKIE_HTTPONLY = False"),
        hit("app/views.py", "response.set_cookie('session', sid, secure=False)"),
        hit("src/server.js", "app.use(session({ secret, cookie: { maxAge: 3600, secure: false } }));",
            "res.cookie('sid', sid, { httpOnly: false });"),
        miss("mysite/settings.py", "SESSION_COOKIE_SECURE = True"),
        miss("mysite/settings/dev.py", "SESSION_COOKIE_SECURE = False"),
        miss("src/mail.js", "const transporter = nodemailer.createTransport({ host, port: 587, secure: false });"),
    ),
    "sec-allowed-hosts-01": case(
        hit("mysite/settings.py", "ALLOWED_HOSTS = ['*']"),
        miss("mysite/settings.py", "ALLOWED_HOSTS = ['app.example.com']",
             'ALLOWED_HOSTS = os.environ["ALLOWED_HOSTS"].split(",")'),
        miss("mysite/settings/local.py", "ALLOWED_HOSTS = ['*']"),
    ),
    "sec-insecure-random-01": case(
        hit("app/auth.py", "reset_token = ''.join(random.choice(ALPHABET) for _ in range(32))",
            "otp = random.randint(100000, 999999)"),
        hit("src/session.js", "const sessionId = Math.random().toString(36).slice(2);"),
        miss("app/auth.py", "reset_token = secrets.token_urlsafe(32)", "delay = random.uniform(0.1, 0.5)",
             "token_count = random.randint(1, 10)", "if token == random.choice(tokens):"),
        miss("tests/test_auth.py", "otp = random.randint(100000, 999999)"),
        hit("auth/token.go", "\ttoken := fmt.Sprint(rand.Int63())", "\tresetCode := rand.Intn(1000000)"),
        miss("auth/token.go", "\ttoken := rand.Text()", "\tn, err := rand.Read(sessionKey)",
             "\tdelay := time.Duration(rand.Intn(100)) * time.Millisecond"),
    ),
    "sec-weak-cipher-01": case(
        hit("app/crypto.py", "cipher = AES.new(key, AES.MODE_ECB)", "cipher = DES3.new(key, DES3.MODE_CBC, iv)",
            "mode = modes.ECB()"),
        hit("src/crypt.js", "const c = crypto.createCipher('aes-256-cbc', password);",
            "const d = crypto.createCipheriv('des-ede3-cbc', key, iv);"),
        hit("src/main/java/Crypto.java", 'Cipher c = Cipher.getInstance("AES");',
            'Cipher d = Cipher.getInstance("DES/CBC/PKCS5Padding");'),
        miss("app/crypto.py", "cipher = AES.new(key, AES.MODE_GCM, nonce=nonce)"),
        miss("src/crypt.js", "const c = crypto.createCipheriv('aes-256-gcm', key, iv);"),
        miss("src/main/java/Crypto.java", 'Cipher c = Cipher.getInstance("AES/GCM/NoPadding");'),
    ),
    "sec-old-tls-01": case(
        hit("net/tls.py", "ctx = ssl.SSLContext(ssl.PROTOCOL_TLSv1)", "ctx.minimum_version = ssl.TLSVersion.TLSv1_1"),
        hit("pkg/tls.go", "cfg := &tls.Config{MinVersion: tls.VersionTLS10}"),
        hit("src/tls.js", "const opts = { secureProtocol: 'TLSv1_method' };", "tls.connect({ minVersion: 'TLSv1' });"),
        miss("net/tls.py", "ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)",
             "ctx.minimum_version = ssl.TLSVersion.TLSv1_2"),
        miss("pkg/tls.go", "cfg := &tls.Config{MinVersion: tls.VersionTLS12}"),
    ),
    "sec-weak-key-01": case(
        hit("app/keys.py", "key = rsa.generate_private_key(public_exponent=65537, key_size=1024)",
            "key = RSA.generate(1024)"),
        hit("src/keys.js", "crypto.generateKeyPairSync('rsa', { modulusLength: 1024 });"),
        hit("scripts/mkcert.sh", "openssl genrsa -out server.key 1024"),
        miss("app/keys.py", "key = rsa.generate_private_key(public_exponent=65537, key_size=2048)",
             "buffer_size = 1024"),
        miss("scripts/mkcert.sh", "openssl genrsa -out server.key 4096"),
    ),
    "sec-ssh-hostkey-01": case(
        hit("deploy/ssh.py", "client.set_missing_host_key_policy(paramiko.AutoAddPolicy())"),
        hit("scripts/deploy.sh", "ssh -o StrictHostKeyChecking=no deploy@host 'systemctl restart app'"),
        hit("pkg/ssh.go", "\tHostKeyCallback: ssh.InsecureIgnoreHostKey(),"),
        miss("deploy/ssh.py", "client.set_missing_host_key_policy(paramiko.RejectPolicy())"),
        miss("scripts/deploy.sh", "ssh -o StrictHostKeyChecking=yes deploy@host",
             "ssh -o StrictHostKeyChecking=accept-new deploy@host"),
    ),
    "sec-mktemp-01": case(
        hit("app/files.py", "path = tempfile.mktemp(suffix='.csv')", "from tempfile import mktemp"),
        miss("app/files.py", "fd, path = tempfile.mkstemp(suffix='.csv')", "tmpdir = tempfile.mkdtemp()"),
    ),
    "sec-hardcoded-tmp-01": case(
        hit("app/cache.py", "CACHE_DIR = '/tmp/myapp-cache'", 'with open("/tmp/report.csv", "w") as fh:'),
        miss("app/cache.py", "CACHE_DIR = tempfile.gettempdir()", "TEMPLATE = '/tmpl/base.html'"),
        miss("tests/test_cache.py", "CACHE_DIR = '/tmp/myapp-cache'"),
    ),
    "sec-bind-all-01": case(
        hit("app/server.py", "app.run(host='0.0.0.0', port=8000)", "sock.bind(('0.0.0.0', 9000))"),
        miss("app/server.py", "app.run(host='127.0.0.1', port=8000)", 'host = os.environ.get("HOST", "127.0.0.1")'),
    ),
    "sec-requests-timeout-01": case(
        hit("app/client.py", "r = requests.get(url)", "r = requests.post(url, json=payload, headers=headers)"),
        miss("app/client.py", "r = requests.get(url, timeout=10)",
             "r = requests.post(url, json=payload, timeout=(3.05, 27))",
             "r = requests.get(url, **options)", "r = session.get(url)"),
        miss("tests/test_client.py", "r = requests.get(url)"),
    ),
    "sec-tar-extract-01": case(
        hit("app/archive.py", "    tar.extractall(dest)", "tarfile.open(path).extractall(target)"),
        miss("app/archive.py", '    tar.extractall(dest, filter="data")', "    zf.extractall(dest)"),
    ),
    "sec-autoescape-off-01": case(
        hit("app/render.py", "env = jinja2.Environment(loader=FileSystemLoader('templates'))",
            "env = Environment(loader=PackageLoader('app'), autoescape=False)"),
        hit("templates/email.html", "{% autoescape off %}"),
        miss("app/render.py",
             "env = jinja2.Environment(loader=FileSystemLoader('templates'), autoescape=select_autoescape())",
             "env = Environment(autoescape=True, loader=loader)"),
        miss("templates/email.html", "{% autoescape on %}"),
    ),
    "sec-mark-safe-01": case(
        hit("app/views.py", "return mark_safe(comment.body)", 'html = mark_safe(f"<b>{name}</b>")',
            'label = Markup("<i>%s</i>" % title)'),
        miss("app/views.py", 'return mark_safe("<br>")', 'html = format_html("<b>{}</b>", name)',
             'label = Markup("<i>{}</i>").format(title)'),
    ),
    "sec-cleartext-protocol-01": case(
        hit("app/legacy.py", "import telnetlib", "ftp = ftplib.FTP(host)", "from ftplib import FTP"),
        miss("app/legacy.py", "ftp = ftplib.FTP_TLS(host)", "from ftplib import FTP_TLS", "import paramiko"),
    ),
    "sec-xxe-01": case(
        hit("app/xml.py", "parser = etree.XMLParser(resolve_entities=True, no_network=False)"),
        hit("src/main/java/Xml.java",
            'dbf.setFeature("http://apache.org/xml/features/disallow-doctype-decl", false);',
            "dbf.setExpandEntityReferences(true);"),
        miss("app/xml.py", "parser = etree.XMLParser(resolve_entities=False, no_network=True)",
             "tree = defusedxml.ElementTree.parse(fh)"),
        miss("src/main/java/Xml.java", 'dbf.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);'),
    ),
    "sec-open-redirect-01": case(
        hit("app/views.py", 'return redirect(request.args.get("next"))',
            'return HttpResponseRedirect(request.GET["next"])'),
        hit("src/routes.js", "  res.redirect(req.query.returnTo);"),
        miss("app/views.py", 'return redirect(url_for("index"))',
             'return redirect(safe_next(request.args.get("next")))'),
        miss("src/routes.js", "  res.redirect('/login');"),
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
    "sec-hidden-text-01": case(
        hit("app/access.py", 'access_level = "user\u202e \u2066// Check if admin\u2069 \u2066"',
            "    # run the job\r    exec(job)", "if is_\u200badmin(user):", "const {timeout,\u3164} = req.query;",
            "x = 1\u2028y = 2", "total = a\x0c+ b"),
        hit("web/app.js", "// settings\u2028const password = load();"),
        hit("tests/test_access.py", "assert is_\u2060admin(user)"),
        miss("app/i18n.py", 'GREETING = "\u0645\u0631\u062d\u0628\u0627 \u05e9\u05dc\u05d5\u05dd"',
             'FAMILY = "\U0001F468\u200d\U0001F469\u200d\U0001F467"',
             'WORD = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"',
             "\x0cdef page_two():", "x = 1\r"),
        miss("app/main.py", "\ufeffimport os"),
        miss("locale/ar/messages.po", 'msgstr "\u202b\u0645\u0631\u062d\u0628\u0627\u202c"'),
    ),
    "sec-hidden-text-02": case(
        hit("docs/guide.md", "Run `rm -rf \u202e/tmp/cache\u202c` to clear it"),
        hit("config/settings.yml", "path: \u202dsafe/../../etc"),
        miss("docs/ar/index.md",
             "\u0645\u0631\u062d\u0628\u0627 \u200fhello\u200f \u2067\u05e9\u05dc\u05d5\u05dd\u2069"),
        miss("locales/he.json", '{"hello": "\u2068\u05e9\u05dc\u05d5\u05dd\u2069"}'),
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
    "hyg-ts-any-01": case(
        hit("src/api.ts", "export function parse(input: any): Result {", "  const body = (await res.json()) as any;",
            "const rows: any[] = [];", "let cache = new Map<any, string>();"),
        hit("web/view.tsx", "  const props = p as any as Props; // any: third-party typing"),
        miss("src/api.ts", "export function parse(input: unknown): Result {", "const anything = company;",
             "// cast as any here only if the SDK typing is wrong", " * @param x: any value the caller likes",
             "const many: number[] = [];", "type Box = { anyOf: string[] };"),
        miss("src/api.test.ts", "const fake = {} as any;"),
        miss("src/api.py", "def parse(x: any) -> None:"),
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
        hit(".github/workflows/after.yml", '        run: echo "${{ github.event.workflow_run.head_branch }}"'),
        hit("action.yml", "      run: echo \"${{ github.event.pull_request.title }}\""),
        hit("ci/templates/action.yaml", "      run: git push origin ${{ github.event.pull_request.head.label }}"),
        hit(".github/workflows/comment.yml", "          script: |",
            "            const body = `${{ github.event.comment.body }}`", flagged=(2,)),
        miss("docs/examples/action.yml", "      run: echo \"${{ github.event.pull_request.title }}\""),
        miss(".github/workflows/triage.yml", "        env:", "          TITLE: ${{ github.event.issue.title }}",
             '        run: echo "$TITLE"', "        if: ${{ github.event.issue.title == 'bug' }}",
             '        run: echo "${{ github.event.issue.number }}"',
             '          gh api "/repos/o/r/contents/x?ref=${{ github.event.repository.default_branch }}"'),
    ),
    "infra-public-bucket-01": case(
        hit("infra/s3.tf", '  acl    = "public-read"', "  block_public_acls       = false"),
        miss("infra/s3.tf", '  acl    = "private"', "  block_public_acls       = true"),
    ),
    "infra-gha-prt-checkout-01": case(
        hit(".github/workflows/pr.yml", "on: pull_request_target", "jobs:", "  build:", "    runs-on: ubuntu-latest",
            "    steps:", "      - uses: actions/checkout@v4", "        with:",
            "          ref: ${{ github.event.pull_request.head.sha }}", "      - run: make test", flagged=(1,)),
        miss(".github/workflows/pr.yml", "on: pull_request", "jobs:", "  build:", "    steps:",
             "      - uses: actions/checkout@v4", "        with:",
             "          ref: ${{ github.event.pull_request.head.sha }}"),
        miss(".github/workflows/label.yml", "on: pull_request_target", "jobs:", "  label:", "    steps:",
             "      - uses: actions/labeler@v5"),
    ),
    "infra-gha-unpinned-tag-01": case(
        hit(".github/workflows/ci.yml", "      - uses: tj-actions/changed-files@v45",
            "      - uses: docker/build-push-action@v6.9.0", "        uses: aws-actions/configure-aws-credentials@4",
            "      - uses: actions-rs/toolchain@v1", f"      - uses: acme/deploy@{'1' * 39}",
            f"      - uses: acme/deploy@{'1' * 40}.1"),
        miss(".github/workflows/ci.yml", "      - uses: actions/checkout@v4",
             "      - uses: github/codeql-action/init@v3",
             f"      - uses: tj-actions/changed-files@{SHA} # v45",
             f"      - uses: docker/build-push-action@{SHA_DIGIT} # v6.9.0",
             f"      - uses: acme/deploy@{'0' * 40}", f"      - uses: acme/deploy@{'1234567890' * 4} # v2",
             "      - uses: ./.github/actions/setup", "      - uses: docker://alpine:3.20"),
    ),
    "infra-gha-insecure-commands-01": case(
        hit(".github/workflows/ci.yml", "      ACTIONS_ALLOW_UNSECURE_COMMANDS: true",
            "      ACTIONS_ALLOW_UNSECURE_COMMANDS: 'true'"),
        miss(".github/workflows/ci.yml", "      ACTIONS_ALLOW_UNSECURE_COMMANDS: false",
             '        run: echo "/opt/tool/bin" >> "$GITHUB_PATH"'),
    ),
    "infra-gha-secrets-json-01": case(
        hit(".github/workflows/ci.yml", "          SECRETS: ${{ toJSON(secrets) }}"),
        miss(".github/workflows/ci.yml", "          TOKEN: ${{ secrets.DEPLOY_TOKEN }}",
             "          GITHUB_CONTEXT: ${{ toJSON(github) }}"),
    ),
    "infra-gha-secrets-inherit-01": case(
        hit(".github/workflows/release.yml", "    secrets: inherit"),
        miss(".github/workflows/release.yml", "    secrets:", "      token: ${{ secrets.RELEASE_TOKEN }}"),
    ),
    "infra-docker-sudo-01": case(
        hit("Dockerfile", "RUN sudo apt-get update", "RUN apt-get update && sudo apt-get install -y curl",
            "    && sudo make install"),
        miss("Dockerfile", "RUN apt-get install -y sudo vim", "RUN echo 'app ALL=(ALL) NOPASSWD: ALL' >> /etc/sudoers",
             "USER root"),
    ),
    "infra-docker-add-01": case(
        hit("Dockerfile", "ADD . /app", "ADD ./src /app/src", "ADD requirements.txt /app/",
            "ADD --chown=app:app config/ /etc/app/"),
        miss("Dockerfile", "ADD https://example.com/tool.tar.gz /opt/", "ADD rootfs.tar.xz /", "COPY . /app"),
    ),
    "infra-docker-secret-arg-01": case(
        hit("Dockerfile", "ARG NPM_TOKEN", "ENV DB_PASSWORD=changeme", "ARG GITHUB_TOKEN="),
        miss("Dockerfile", "ARG NODE_VERSION=20", "ENV TOKEN_FILE=/run/secrets/token", "ENV MAX_TOKENS=4096",
             "ENV Request_Token=42", "ENV NOTOKEN=1",
             "RUN --mount=type=secret,id=npm_token npm ci"),
    ),
    "infra-run-as-root-01": case(
        hit("k8s/deploy.yaml", "          runAsUser: 0", "          runAsNonRoot: false"),
        hit("docker-compose.yml", "    user: root"),
        miss("k8s/deploy.yaml", "          runAsUser: 10001", "          runAsNonRoot: true",
             "          runAsGroup: 0"),
        miss("docker-compose.yml", '    user: "1000:1000"'),
    ),
    "infra-docker-socket-01": case(
        hit("docker-compose.yml", "      - /var/run/docker.sock:/var/run/docker.sock"),
        hit("k8s/agent.yaml", "            path: /var/run/docker.sock"),
        hit("scripts/ci.sh", "docker run -v /var/run/docker.sock:/var/run/docker.sock ci-image"),
        miss("docker-compose.yml", "      - DOCKER_HOST=unix:///var/run/docker.sock", "      - ./data:/data"),
    ),
    "infra-tf-open-admin-port-01": case(
        hit("infra/sg.tf", "  ingress {", "    from_port   = 22", "    to_port     = 22", '    protocol    = "tcp"',
            '    cidr_blocks = ["0.0.0.0/0"]', "  }", flagged=(2,)),
        hit("infra/nsg.tf", '    source_address_prefix      = "*"', '    destination_port_range     = "3389"',
            flagged=(1,)),
        miss("infra/sg.tf", "  ingress {", "    from_port   = 22", "    to_port     = 22",
             '    cidr_blocks = ["10.0.0.0/8"]', "  }", "  ingress {", "    from_port   = 443", "    to_port     = 443",
             '    cidr_blocks = ["0.0.0.0/0"]', "  }"),
    ),
    "infra-submodule-url-01": case(
        hit(".gitmodules", "\turl = https://github.com/someone-else/laf.git",
            removed=("\turl = https://github.com/aseprite/laf.git",)),
        miss(".gitmodules", '[submodule "laf"]', "\tpath = laf", "\turl = https://github.com/aseprite/laf.git"),
        miss(".gitmodules", "\tpath = third_party/laf", removed=("\tpath = laf",)),
    ),
    "infra-tf-encryption-off-01": case(
        hit("infra/db.tf", "  storage_encrypted = false", "  encrypted         = false"),
        miss("infra/db.tf", "  storage_encrypted = true", "  encrypted         = var.encrypt"),
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
    # issue 31: rules a careful reviewer would have written, each from a real fix reviewed reversed
    # (benchmarks/recall_fixes.json names the fixes; the samples here are our own lines of their shape)
    "sec-path-commonprefix-01": case(
        hit("app/static.py", "    if os.path.commonprefix([os.path.realpath(full), directory]) != directory:",
            "    if commonprefix((abs_path, root)) != root:"),
        miss("app/static.py", "    if os.path.commonpath([os.path.realpath(full), directory]) != directory:",
             "    prefix = os.path.commonprefix(names)", "    stem = os.path.commonprefix([a.title, b.title])"),
        miss("tests/test_static.py", "    assert os.path.commonprefix([os.path.realpath(p), root]) == root"),
    ),
    "sec-path-prefix-01": case(
        hit("lib/static.rb", "      return if ::File.expand_path(::File.join(@root, path_info)).start_with?(@root)"),
        hit("app/files.py", "    if not os.path.realpath(target).startswith(base_dir):",
            "    if not full_path.startswith(self.root):"),
        hit("server/files.go", "\tif !strings.HasPrefix(absPath, rootDir) {"),
        hit("src/serve.js", "  if (!path.resolve(root, p).startsWith(root)) return next()"),
        miss("lib/static.rb", "      return if expanded == @root || expanded.start_with?(@root_with_separator)"),
        miss("app/files.py", "    if not os.path.realpath(target).startswith(base_dir + os.sep):",
             "    if name.startswith(prefix):", "    if url.startswith(base_url):",
             "    if full_path.startswith('/'):"),
        miss("server/files.go", "\tif !strings.HasPrefix(line, prefix) {"),
    ),
    "sec-path-request-01": case(
        hit("routes/files.js", "  var filePath = path.join(__dirname, 'files', req.params.file);",
            "  res.sendFile(path.resolve(UPLOADS, req.query.name))"),
        hit("app/views.py", "    return send_file(os.path.join(UPLOAD_DIR, request.args['name']))"),
        miss("routes/files.js", "  var filePath = resolvePath(FILES_DIR, req.params.file)",
             "  const p = path.join(__dirname, 'public', 'index.html')", "  res.json(req.params)"),
        miss("app/views.py", "    return send_from_directory(UPLOAD_DIR, request.args['name'])",
             "    path = os.path.join(settings.MEDIA_ROOT, 'uploads')"),
    ),
    "sec-redos-nested-01": case(
        hit("src/referrer.js", "\tif (/^(.+\\.)*localhost$/.test(url.host)) {", "const re = /(a+)+b/;"),
        hit("app/parse.py", '    EMAIL = re.compile(r"^([a-zA-Z0-9]+\\.?)+@example$")'),
        hit("lib/parser.rb", "    TOKEN = %r{(\\w+\\s?)*:}"),
        miss("src/referrer.js", "\tif (url.host === 'localhost' || url.host.endsWith('.localhost')) {",
             "const total = (a + b) * c;", "const re = /(ab)+c/;", "const s = `${(x+1)*2}`;",
             "const re = /^(?:\\d{1,3}\\.){3}\\d{1,3}$/;"),
        miss("app/parse.py", '    NUM = re.compile(r"(\\d+)(\\.\\d+)?")', "    area = (w + 2) * (h + 2)"),
        miss("server/route.go", '\tre := regexp.MustCompile(`^(a+)+$`)'),
    ),
    "sec-redos-01": case(
        hit("lib/rack/utils.rb", "      q_value_header.to_s.split(/\\s*,\\s*/).map do |part|",
            "        value, parameters = part.split(/\\s*;\\s*/, 2)"),
        hit("lib/utils.js", "  return str.replace(/^\\s*/, '').replace(/\\s*$/, '');", flagged=(1,)),
        hit("app/headers.py", '    parts = re.split(r"\\s*,\\s*", header)'),
        miss("lib/rack/utils.rb", "      q_value_header.to_s.split(',').map do |part|",
             "      words = text.split(/\\s+/)", "      line.sub!(/^\\s*#/, '')"),
        miss("lib/utils.js", "  return str.trim ? str.trim() : str.replace(/^\\s+|\\s+$/g, '');",
             "  const parts = s.split(/\\s+/);"),
        miss("app/headers.py", '    parts = [p.strip() for p in header.split(",")]',
             '    words = re.split(r"\\s+", text)'),
    ),
    "sec-decompress-unbounded-01": case(
        hit("app/compression.py", "            return cast(bytes, self._obj.decompress(data))",
            "    body = zlib.decompress(payload)", "    raw = gzip.decompress(request.body)"),
        miss("app/compression.py", "            return cast(bytes, self._obj.decompress(data, max_length))",
             "    body = zlib.decompress(payload, wbits, bufsize)", "    blob = zlib.compress(data)",
             "    text = codecs.decode(data)"),
    ),
    "sec-ldap-format-01": case(
        hit("app/directory.py", '    conn.search(base_dn, f"(uid={username})", attributes=["cn"])',
            '    results = l.search_s(BASE, ldap.SCOPE_SUBTREE, "(&(objectClass=person)(mail=%s))" % email)',
            '    conn.search(search_filter="(sAMAccountName=" + user + ")", search_base=base)'),
        hit("src/ldap.js", "  client.search(base, { filter: `(uid=${username})` }, cb);"),
        hit("auth/ldap.go", '\tfilter := fmt.Sprintf("(uid=%s)", username)'),
        miss("app/directory.py", '    conn.search(base_dn, f"(uid={escape_filter_chars(username)})")',
             '    results = l.search_s(BASE, ldap.SCOPE_SUBTREE, filter_format("(mail=%s)", [email]))',
             '    conn.search(base_dn, "(objectClass=person)")', '    hits = index.search(f"name:{query}")'),
        miss("auth/ldap.go", '\tfilter := fmt.Sprintf("(uid=%s)", ldap.EscapeFilter(username))'),
    ),
    "sec-html-format-01": case(
        hit("app/views.py", '    return HttpResponse("<p>Hello %s</p>" % name)',
            '    html = f"<li>{item.title}</li>"', '    body = "<a href=\'{}\'>{}</a>".format(url, text)'),
        hit("app/views.rb", '    "<td class=\'name\'>#{entry.name}</td>"'),
        hit("src/list.js", "  list.innerHTML = `<li>${item.name}</li>`;"),
        miss("app/views.py", '    return HttpResponse(format_html("<p>Hello {}</p>", name))',
             '    html = f"<li>{escape(item.title)}</li>"', '    log.info("got %s items" % n)',
             '    msg = f"{count} items"', '    # "<p>%s</p>" % x is how it used to be built',
             '        return f"<Response [{self.status_code}]>"', "        return f\"<lookup '{self.name}'>\"",
             '    link = f"<https://docs.example.org/releases/{version}/>`_"'),
        miss("src/list.js", "  list.innerHTML = `<li>${escapeHtml(item.name)}</li>`;", "  el.textContent = `${name}`;"),
    ),
    "sec-header-crlf-01": case(
        hit("app/views.py", "    response.headers[\"Location\"] = request.args[\"next\"]",
            "    resp.set_header('X-Trace', request.headers['X-Trace'])"),
        hit("server/files.go",
            '\tc.Writer.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=\\"%s\\"", filename))'),
        hit("src/app.js", "  res.setHeader('X-Request-Id', req.query.id);"),
        miss("app/views.py", "    response.headers[\"X-Frame-Options\"] = \"DENY\"",
             "    response.headers[\"Location\"] = quote(request.args[\"next\"])"),
        miss("server/files.go", '\tc.Writer.Header().Set("Content-Type", "application/json")',
             '\tc.Writer.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", params))'),
    ),
    "sec-ssrf-urljoin-01": case(
        hit("app/proxy.py", '    upstream = urljoin(API_BASE, request.args["path"])'),
        hit("src/proxy.js", "  const target = new URL(req.query.path, BASE_URL);"),
        miss("app/proxy.py", '    upstream = urljoin(API_BASE, quote(request.args["path"], safe=""))',
             '    upstream = urljoin(API_BASE, "v1/items")'),
        miss("src/proxy.js", "  const target = new URL(`/items/${encodeURIComponent(req.query.id)}`, BASE_URL);",
             "  const here = new URL(window.location.href);"),
    ),
    "infra-gpg-detached-01": case(
        hit("Dockerfile", "RUN gpg --batch --verify node.tar.gz.asc \\",
            "    && gpg --verify node-v20.tar.xz.sig && tar xf node-v20.tar.xz",
            flagged=(1, 2)),
        hit("scripts/install.sh", "gpg --verify \"release-${VERSION}.tar.gz.asc\""),
        miss("Dockerfile", "RUN gpg --batch --verify node.tar.gz.asc node.tar.gz",
             "RUN gpg --batch --verify SHASUMS256.txt.asc",
             "RUN gpg --verify-files a.tar.gz.asc", "gpg --verify \"$SUMS.asc\""),
    ),
    "sec-go-command-01": case(
        hit("cmd/run.go", '\tout, err := exec.Command("sh", "-c", "git log "+ref).Output()',
            '\tcmd := exec.CommandContext(ctx, "/bin/bash", "-c", script)'),
        miss("cmd/run.go", '\tout, err := exec.Command("git", "log", ref).Output()',
             '\tcmd := exec.Command("shfmt", "-d", path)'),
        miss("cmd/run_test.go", '\tout, err := exec.Command("sh", "-c", "echo hi").Output()'),
    ),
    "infra-gha-injection-02": case(
        hit(".github/workflows/ci.yml", "          sudo ln -s ${{ steps.setup-chrome.outputs.chrome-path }} /bin/c",
            "        run: ./release.sh ${{ inputs.version }}",
            "        run: echo ${{ github.event.inputs.tag }} ${{ needs.plan.outputs.ref }}"),
        hit("action.yml", "      run: pip install ${{ inputs.packages }}"),
        miss(".github/workflows/ci.yml", "          CHROME_PATH: ${{ steps.setup-chrome.outputs.chrome-path }}",
             "        if: ${{ inputs.publish }}", "        with:", "          version: ${{ inputs.version }}",
             '          sudo ln -s "$CHROME_PATH" /usr/bin/chrome'),
    ),

}


RULES_BY_ID = {r["id"]: r for r in json.loads(RULES_FILE.read_text(encoding="utf-8"))["rules"]}


def _review(cli: Any, rule_id: str, sample: Sample) -> tuple[list[dict[str, Any]], str]:
    """Run the CLI on a diff adding ``sample``; check the rule's agent really reviewed the file."""
    diff = make_diff(sample.path, list(sample.lines)) if not sample.removed else _replacing(sample)
    result = cli("--diff", "-", "--format", "json", "--filter-mode", "added", stdin=diff.encode())
    assert result.code in (0, 1), result.err
    report = result.json()
    # The built-in llm agents are skipped when their key is not set, and zizmor is off until enabled;
    # every other agent completes.
    failed = [a for a in report["agents"] if a["status"] != "completed"
              and not (a["kind"] == "llm" and a["status"] == "skipped" and not a["required"])
              and not (a["status"] == "skipped" and "enabled: false" in (a["error"] or ""))]
    assert not failed, failed
    agent = RULES_BY_ID[rule_id]["agent"]
    routed = [e for e in report["manifest"] if e["agent"] == agent and sample.path in e["files"]]
    assert routed, f"{rule_id}: agent {agent} is not dispatched on {sample.path}"
    return report["findings"], result.out


def _replacing(sample: Sample) -> str:
    """A diff of a modified file whose first lines ``sample.removed`` are replaced by ``sample.lines``."""
    old, new = len(sample.removed), len(sample.lines)
    return (f"diff --git a/{sample.path} b/{sample.path}\n--- a/{sample.path}\n+++ b/{sample.path}\n"
            f"@@ -1,{old} +1,{new} @@\n" + "".join(f"-{line}\n" for line in sample.removed)
            + "".join(f"+{line}\n" for line in sample.lines))


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
def test_every_rule_path_is_routed_to_the_rule_agent(rule: dict[str, Any]) -> None:
    """A rule whose agent the composition never dispatches on a file it targets is dead weight.
    Stages 2 and 3 (classify, compose) decide that; no agent needs to run."""
    from review_gate.change.diff_parser import parse_diff
    from review_gate.config import load_config
    from review_gate.models import PRFacts
    from review_gate.pipeline.classify import classify
    from review_gate.pipeline.compose import compose

    config = load_config(None)
    for glob in rule["paths"]:
        path = _example_path(glob)
        facts = PRFacts(source="test", files=parse_diff(make_diff(path, ["x"]).encode()))
        manifest = compose(classify(facts, config.domains.domains), config.composition.policies)
        routed = {e.agent for e in manifest.entries if path in e.files}
        assert rule["agent"] in routed, f"{rule['id']}: {rule['agent']} never reviews {path} (from {glob!r})"


def test_rules_doc_counts_match_the_config() -> None:
    """docs/rules.md lists every agent and category with its counts; it must not go stale."""
    doc = (RULES_FILE.parents[1] / "docs" / "rules.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| ([\w-]+) \| `([\w-]+)` \| (\d+) \| ([^|]+) \|$", doc, re.MULTILINE))
    counts: dict[tuple[str, str], Counter[str]] = {}
    for rule in RULES_BY_ID.values():
        counts.setdefault((rule["agent"], rule["category"]), Counter())[rule["severity"]] += 1
    expected = {(agent, category, str(sum(c.values())),
                 ", ".join(f"{s} {c[s]}" for s in ("critical", "major", "warning", "info") if c[s]))
                for (agent, category), c in counts.items()}
    assert rows == expected
    patterns = sum(1 for rule in RULES_BY_ID.values() if rule.get("pattern"))
    assert f"ships {patterns} RE2 rules" in doc
    gate = sum(1 for rule in RULES_BY_ID.values() if rule["agent"] == "review-gate")  # raised by the gate itself
    assert f"and {len(RULES_BY_ID) - patterns - gate} checklist rules of three LLM agents" in doc


def test_the_secret_rules_find_nothing_in_the_built_in_configuration() -> None:
    """Reports and bundles carry the rules' texts, and what a change commits of them is scanned by
    the secret rules: a rule text that spells out a secret fails the gate on its own report
    (the private-key rule's detection quoted a whole PEM header)."""
    import re2

    config = Path(__file__).resolve().parents[2] / "config"
    texts = {p.name: p.read_text(encoding="utf-8") for p in sorted(config.glob("*.json"))}
    found = [(name, rule["id"], number) for rule in RULES_BY_ID.values() if rule.get("category") == "secrets"
             and not rule.get("paths") for name, text in texts.items()
             for number, line in enumerate(text.splitlines(), 1) if re2.search(rule["pattern"], line)]
    assert found == []
