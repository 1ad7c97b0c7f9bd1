"""Secret redaction against a corpus (docs/refresh.md, "Secret redaction"): the credential
shapes people paste into a conversation, each redacted on its own even when several share a
line, and ordinary sentences about keys and passwords left byte for byte.

Token bodies are generated from a fixed seed (``_body``) so no real-looking credential is
written out in the repository, and every run sees the same text.
"""

from __future__ import annotations

import random
import string

import pytest

from yak.memory.redact import MARKER, redact

_ALNUM = string.ascii_letters + string.digits
_HEX = "0123456789abcdef"
_B64 = _ALNUM + "+/"


def _body(length: int, alphabet: str = _ALNUM, *, seed: int) -> str:
    """``length`` characters of ``alphabet``, the same for a given seed."""
    return "".join(random.Random(seed).choices(alphabet, k=length))


AWS_ID = "AKIA" + _body(16, string.ascii_uppercase + string.digits, seed=1)
AWS_SECRET = _body(40, _B64, seed=2)
HF = "hf_" + _body(34, seed=3)
NPM = "npm_" + _body(36, seed=4)
GHP = "ghp_" + _body(36, seed=5)
GITHUB_PAT = "github_pat_" + _body(22, seed=6) + "_" + _body(59, seed=7)
GLPAT = "glpat-" + _body(20, _ALNUM + "_-", seed=8)
SLACK_BOT = "xoxb-" + "123456789012-1234567890123-" + _body(24, string.ascii_lowercase, seed=9)
SLACK_HOOK = (
    "https://hooks.slack.com/services/T"
    + _body(8, string.ascii_uppercase, seed=10)
    + "/B"
    + _body(8, string.ascii_uppercase, seed=11)
    + "/"
    + _body(24, seed=12)
)
GOOGLE = "AIza" + _body(35, _ALNUM + "_-", seed=13)
STRIPE_LIVE = "sk_live_" + _body(24, seed=14)
STRIPE_RESTRICTED = "rk_live_" + _body(24, seed=15)
STRIPE_TEST = "sk_test_" + _body(99, seed=16)
SENTRY_TOKEN = "sntrys_" + _body(60, _ALNUM + "+/=", seed=17)
SENTRY_KEY = _body(32, _HEX, seed=18)
SENDGRID = "SG." + _body(22, seed=19) + "." + _body(43, seed=20)
TWILIO = "SK" + _body(32, _HEX, seed=21)
DIGITALOCEAN = "dop_v1_" + _body(64, _HEX, seed=22)
SHOPIFY = "shpat_" + _body(32, _HEX, seed=23)
PYPI = "pypi-AgEIcHlwaS5vcmc" + _body(80, _ALNUM + "_-", seed=24)
DOCKER = "dckr_pat_" + _body(27, _ALNUM + "_-", seed=25)
LINEAR = "lin_api_" + _body(40, seed=26)
NOTION_OLD = "secret_" + _body(43, seed=27)
NOTION = "ntn_" + _body(46, seed=28)
ANTHROPIC = "sk-ant-api03-" + _body(93, _ALNUM + "_-", seed=29)
OPENAI = "sk-proj-" + _body(48, _ALNUM + "_-", seed=30)
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ."
    + _body(43, _ALNUM + "_-", seed=31)
)
TELEGRAM = "123456789:" + _body(35, _ALNUM + "_-", seed=32)
DISCORD = "M" + _body(23, seed=33) + "." + _body(6, seed=34) + "." + _body(27, seed=35)
MAILCHIMP = _body(32, _HEX, seed=36) + "-us14"
AZURE = _body(86, _B64, seed=37) + "=="
SQUARE = "sq0csp-" + _body(43, _ALNUM + "_-", seed=38)
ATLASSIAN = "ATATT3" + _body(180, _ALNUM + "_-", seed=39)
DATABRICKS = "dapi" + _body(32, _HEX, seed=40)
GOOGLE_OAUTH = "GOCSPX-" + _body(28, _ALNUM + "_-", seed=41)
AGE = "AGE-SECRET-KEY-1" + _body(58, string.ascii_uppercase + string.digits, seed=42)
HIGH_ENTROPY = _body(40, _ALNUM + "+/", seed=43)
PRIVATE_KEY_BODY = _body(64, _B64, seed=44)
AMZ_SIGNATURE = _body(64, _HEX, seed=45)

# (what was pasted, the secrets in it, a flag that must be reported)
CREDENTIALS: list[tuple[str, tuple[str, ...], str]] = [
    # Several credentials on one line: each is redacted.
    ("DB_PASSWORD=a1b2c3 API_TOKEN=x9y8z7", ("a1b2c3", "x9y8z7"), "redacted:password_assignment"),
    (
        f"aws_access_key_id={AWS_ID} aws_secret_access_key={AWS_SECRET}",
        (AWS_ID, AWS_SECRET),
        "redacted:aws_key",
    ),
    (f"{AWS_ID}:{AWS_SECRET}", (AWS_ID, AWS_SECRET), "redacted:aws_secret_key"),
    (
        f"deploy-bot,,{AWS_ID},{AWS_SECRET},https://console",
        (AWS_ID, AWS_SECRET),
        "redacted:aws_key",
    ),
    (
        "https://api.example.com/v1/export?token=tK93mQx81LpZ&api_key=zzYY98765abc&sig=Qw3rTy7uIoPz",
        ("tK93mQx81LpZ", "zzYY98765abc", "Qw3rTy7uIoPz"),
        "redacted:url_secret",
    ),
    (
        "https://bucket.s3.amazonaws.com/f.zip?X-Amz-Credential=AKIDEXAMPLE%2F20240101"
        f"&X-Amz-Signature={AMZ_SIGNATURE}",
        (AMZ_SIGNATURE,),
        "redacted:url_secret",
    ),
    (f"tokens: {HF} {NPM} {GHP}", (HF, NPM, GHP), "redacted:huggingface_token"),
    (
        f"stripe {STRIPE_LIVE} and slack {SLACK_BOT}",
        (STRIPE_LIVE, SLACK_BOT),
        "redacted:slack_token",
    ),
    # What people type.
    ("the staging DB password is hunter2x", ("hunter2x",), "redacted:password_prose"),
    ("pw: Kq7!mZ2p", ("Kq7!mZ2p",), "redacted:password_prose"),
    ("password for the admin account: Sup3rS3cret!", ("Sup3rS3cret!",), "redacted:password_prose"),
    (
        "the token is 8f3Kx9QmZ2LpW7vY, it expires Friday",
        ("8f3Kx9QmZ2LpW7vY",),
        "redacted:password_prose",
    ),
    (
        'the wifi password is "purple monkey dishwasher"',
        ("purple monkey dishwasher",),
        "redacted:password_prose",
    ),
    ("DB_PASS=hunter", ("hunter",), "redacted:password_assignment"),
    (
        "export GITHUB_TOKEN=Zm9vYmFyYmF6cXV4MTIz",
        ("Zm9vYmFyYmF6cXV4MTIz",),
        "redacted:password_assignment",
    ),
    ("MYSQL_PWD=r00tPw!", ("r00tPw!",), "redacted:password_assignment"),
    ("MAILGUN_KEY=7a1c9e3b5d", ("7a1c9e3b5d",), "redacted:password_assignment"),
    ("SENDGRID_API_KEY='plainsecretvalue'", ("plainsecretvalue",), "redacted:password_assignment"),
    (
        "JWT_SECRET=correct-horse-battery",
        ("correct-horse-battery",),
        "redacted:password_assignment",
    ),
    ("  api_key: 5c8e0a2f9b7d", ("5c8e0a2f9b7d",), "redacted:password_assignment"),
    (
        '{"password": "p@ss-w0rd-22", "client_secret": "cs_9f8e7d6c"}',
        ("p@ss-w0rd-22", "cs_9f8e7d6c"),
        "redacted:password_assignment",
    ),
    ("spring.datasource.password=Spr1ngPw", ("Spr1ngPw",), "redacted:password_assignment"),
    ("mysql --password S3cretPw9 -h db", ("S3cretPw9",), "redacted:password_flag"),
    ("curl -u admin:Adm1nPw! https://ci.example.com", ("Adm1nPw!",), "redacted:password_flag"),
    ("sshpass -p 'Ssh9pass' ssh deploy@host", ("Ssh9pass",), "redacted:password_flag"),
    ("machine git.example.com login me password N3trcPw!", ("N3trcPw!",), "redacted:password_flag"),
    (
        "Cookie: sessionid=8c1f0e9a7b2d4c3e; csrftoken=Xk29sLq0Pz7",
        ("8c1f0e9a7b2d4c3e", "Xk29sLq0Pz7"),
        "redacted:password_assignment",
    ),
    (
        "Server=db;User Id=sa;Password=Str0ngPa55!;Encrypt=true",
        ("Str0ngPa55!",),
        "redacted:password_assignment",
    ),
    (
        "jdbc:mysql://db/app?user=root&password=Jdbc9pw",
        ("Jdbc9pw",),
        "redacted:url_secret",
    ),
    ("X-API-Key: 5f4dcc3b5aa765d61d83", ("5f4dcc3b5aa765d61d83",), "redacted:password_assignment"),
    ("mysqldump -u root -pMy5qlPw app > app.sql", ("My5qlPw",), "redacted:password_flag"),
    ("the root password was changed to N3wPassw0rd!", ("N3wPassw0rd!",), "redacted:password_prose"),
    ('if "0pen-sesame-42" == password: allow()', ("0pen-sesame-42",), "redacted:secret_keyword"),
    # Service tokens by their prefixes (Yak's own patterns or the library's detectors).
    (f"HF_TOKEN={HF}", (HF,), "redacted:huggingface_token"),
    (f"my npm token {NPM}", (NPM,), "redacted:npm_token"),
    (f"//registry.npmjs.org/:_authToken={NPM}", (NPM,), "redacted:npm_token"),
    (f"gitlab {GLPAT}", (GLPAT,), "redacted:gitlab_token"),
    (f"hook: {SLACK_HOOK}", (SLACK_HOOK.split("/services/")[1],), "redacted:slack_token"),
    (f"maps key {GOOGLE}", (GOOGLE,), "redacted:google_api_key"),
    (f"restricted {STRIPE_RESTRICTED}", (STRIPE_RESTRICTED,), "redacted:stripe_access_key"),
    (f"test key {STRIPE_TEST}", (STRIPE_TEST,), "redacted:stripe_access_key"),
    (f"fine-grained {GITHUB_PAT}", (GITHUB_PAT,), "redacted:github_token"),
    (f"SENTRY_AUTH_TOKEN is {SENTRY_TOKEN}", (SENTRY_TOKEN,), "redacted:sentry_token"),
    (
        f"dsn = https://{SENTRY_KEY}@o450123.ingest.sentry.io/5512345",
        (SENTRY_KEY,),
        "redacted:sentry_dsn",
    ),
    (f"sendgrid {SENDGRID}", (SENDGRID,), "redacted:sendgrid_api_key"),
    (f"twilio api key {TWILIO}", (TWILIO,), "redacted:twilio_api_key"),
    (f"do token {DIGITALOCEAN}", (DIGITALOCEAN,), "redacted:digitalocean_token"),
    (f"shopify admin {SHOPIFY}", (SHOPIFY,), "redacted:shopify_token"),
    (f"upload with {PYPI}", (PYPI,), "redacted:pypi_token"),
    (f"docker login -p {DOCKER}", (DOCKER,), "redacted:docker_hub_token"),
    (f"linear {LINEAR}", (LINEAR,), "redacted:linear_api_key"),
    (f"notion {NOTION_OLD} or {NOTION}", (NOTION_OLD, NOTION), "redacted:notion_token"),
    (f"ANTHROPIC_API_KEY={ANTHROPIC}", (ANTHROPIC,), "redacted:anthropic_key"),
    (f"openai {OPENAI}", (OPENAI,), "redacted:openai_key"),
    (f"cookie {JWT}", (JWT,), "redacted:jwt"),
    (f"Authorization: Bearer {_body(40, seed=50)}", (_body(40, seed=50),), "redacted:bearer_token"),
    (
        "DATABASE_URL=postgres://app:pg_Pa55word@db:5432/app",
        ("pg_Pa55word",),
        "redacted:url_password",
    ),
    (f"bot {TELEGRAM}", (TELEGRAM,), "redacted:telegram_bot_token"),
    (f"discord {DISCORD}", (DISCORD,), "redacted:discord_bot_token"),
    (f"mailchimp {MAILCHIMP}", (MAILCHIMP,), "redacted:mailchimp_access_key"),
    (
        f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={AZURE};EndpointSuffix=x",
        (AZURE,),
        "redacted:password_assignment",  # "AccountKey=" is a secret-named assignment first
    ),
    (f"square {SQUARE}", (SQUARE,), "redacted:square_oauth_secret"),
    (f"jira {ATLASSIAN}", (ATLASSIAN,), "redacted:atlassian_token"),
    (f"databricks {DATABRICKS}", (DATABRICKS,), "redacted:databricks_token"),
    (f"client secret {GOOGLE_OAUTH}", (GOOGLE_OAUTH,), "redacted:google_oauth"),
    (f"age key {AGE}", (AGE,), "redacted:age_secret_key"),
    (
        f'config = {{"signing": "{HIGH_ENTROPY}"}}',
        (HIGH_ENTROPY,),
        "redacted:base64_high_entropy_string",
    ),
    ('if password == "open-sesame-42": allow()', ("open-sesame-42",), "redacted:secret_keyword"),
    (
        '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n'
        f'{PRIVATE_KEY_BODY}\\n-----END PRIVATE KEY-----\\n", "client_email": "a@b.iam"}}',
        (PRIVATE_KEY_BODY,),
        "redacted:private_key",
    ),
]

# Ordinary sentences and code about keys and passwords: no credential, left byte for byte.
ORDINARY: list[str] = [
    "rotate the API key every 90 days",
    "the password field is validated on blur",
    "KEY_LENGTH = 32",
    "use `os.environ['API_KEY']`",
    "token counts are logged",
    "fixed in 3f2a9c1b7d8e4f5a6b7c8d9e0f1a2b3c4d5e6f7a, see the changelog",
    "request id 123e4567-e89b-12d3-a456-426614174000 failed once",
    "the API server runs on 10.0.0.12:8080",
    "see docs/password-reset.md",
    "password = request.form['password']",
    "api_key: str",
    # A number after a secret-sounding name is a setting (a lifetime, a size), not a credential.
    "TOKEN_TTL=3600",
    "max_tokens = 8192",
    "token_count: 1532",
    "the secret key is stored in the OS keyring",
    "pass the token to the client in a header",
    "the token is refreshed every hour",
    "password: required, at least 12 characters",
    "API keys live in .env, which is git-ignored",
    'sort_key = "created_at"',
    "def login(username: str, password: str) -> Session:",
    'headers = {"Authorization": f"Bearer {token}"}',
    "the primary key is user_id",
    "pw: see the team vault",
    'SECRET_KEY = os.environ["SECRET_KEY"]',
    "PASSWORD_MIN_LENGTH=12",
    'KEY_PREFIX = "yak:"',
    "https://example.com/search?q=password+reset&page=2",
    "the keyboard shortcut is Ctrl+K",
    "we hash passwords with argon2id",
    "git log --author=alice --since=2.weeks",
    "mysql -u root -p app_db",
    "the password was changed yesterday",
    "session = Session(engine)",
    '    ALLOW_SESSION = "allow_session"  # an enum member',
    'TOKEN = "token"',
    "- KEY=value pairs go in .env",
    "- the secret is v1.2.3-rc1",
    "- the token is t-1234 in Jira",
    "- Token budget: 48,000 characters",
    "- cache key = sha256(text)[:16]",
    "the session cookie is HttpOnly",
    "the access token expires after 3600 seconds",
    "export PATH=$HOME/.local/bin:$PATH",
    "self.api_key = api_key",
    "client = Client(api_key=api_key, auth_token=auth_token, timeout=30)",
    'key = "/home/me/proj"',
    # A Stripe publishable key is public by design (it ships in every checkout page).
    "checkout uses pk_live_" + _body(24, seed=60),
]


def _pieces(secret: str) -> set[str]:
    """Every 8-character piece of ``secret`` (the whole of a shorter one): none may survive,
    so a half-redacted token fails too."""
    if len(secret) <= 8:
        return {secret}
    return {secret[i : i + 8] for i in range(len(secret) - 7)}


def test_the_corpus_is_as_large_as_promised():
    """At least 40 credential shapes and 20 ordinary sentences (docs/architecture.md)."""
    assert len({text for text, _, _ in CREDENTIALS}) >= 40
    assert len(set(ORDINARY)) >= 20


@pytest.mark.parametrize(("text", "secrets", "flag"), CREDENTIALS)
def test_every_credential_is_redacted(text, secrets, flag):
    """No 8-character piece of any secret on the line is left, a marker stands in for each,
    the expected kind is reported, and no finding carries a secret."""
    redacted, findings = redact(text)
    for secret in secrets:
        left = [piece for piece in _pieces(secret) if piece in redacted]
        assert not left, f"{left[:3]} left in {redacted!r}"
    assert len(MARKER.findall(redacted)) >= len(secrets)
    assert flag in findings, findings
    assert all(secret not in finding for secret in secrets for finding in findings)


@pytest.mark.parametrize(("text", "secrets", "flag"), CREDENTIALS)
def test_redacting_the_redacted_corpus_changes_nothing(text, secrets, flag):
    """A reply that repeats the markers comes back unchanged and reports nothing."""
    once, _ = redact(text)
    assert redact(once) == (once, ())


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_sentences_are_untouched(text):
    """Prose, code, hashes, ids and addresses about keys and passwords pass byte for byte."""
    assert redact(text) == (text, ())


def test_the_whole_corpus_as_one_text():
    """All shapes and sentences in one text (one per line): every secret is gone, every
    ordinary line is kept, and the text around the markers is unchanged."""
    lines = [text for text, _, _ in CREDENTIALS] + ORDINARY
    text = "\n".join(lines)
    redacted, findings = redact(text)
    for _, secrets, _ in CREDENTIALS:
        for secret in secrets:
            assert not [piece for piece in _pieces(secret) if piece in redacted]
    out_lines = redacted.split("\n")
    assert len(out_lines) == len(lines)
    assert out_lines[len(CREDENTIALS) :] == ORDINARY
    assert {flag for _, _, flag in CREDENTIALS} <= set(findings)


def test_prose_keeps_the_punctuation_after_a_secret():
    """The sentence around a secret is kept: only the value becomes a marker."""
    assert redact("the staging DB password is hunter2x. Rotate it.") == (
        "the staging DB password is [REDACTED:password-prose]. Rotate it.",
        ("redacted:password_prose",),
    )


def test_several_assignments_on_a_line_keep_their_names():
    """Each value is replaced on its own; the names and separators stay."""
    assert redact("DB_PASSWORD=a1b2c3 API_TOKEN=x9y8z7 DEBUG=1") == (
        "DB_PASSWORD=[REDACTED:password-assignment] API_TOKEN=[REDACTED:password-assignment] "
        "DEBUG=1",
        ("redacted:password_assignment",),
    )


def test_a_url_query_keeps_its_ordinary_parameters():
    """Only the secret-named parameters' values are replaced."""
    url = "https://x.example/cb?page=2&token=tK93mQx81LpZ&lang=en"
    assert redact(url) == (
        "https://x.example/cb?page=2&token=[REDACTED:url-secret]&lang=en",
        ("redacted:url_secret",),
    )


def test_non_ascii_text_around_a_secret_is_kept():
    """Lines are cut on bytes internally; accented text, emoji and a lone surrogate around and
    between candidate lines come back exactly."""
    text = "café ☕ 🎉\nmot de passe, password: Sécr3t-42 ✓\nnaïve \ud800 line\nAPI_TOKEN=x9y8z7 é"
    redacted, _ = redact(text)
    assert redacted == (
        "café ☕ 🎉\nmot de passe, password: [REDACTED:password-prose] ✓\nnaïve \ud800 line\n"
        "API_TOKEN=[REDACTED:password-assignment] é"
    )
