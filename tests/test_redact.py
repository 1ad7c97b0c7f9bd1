"""Secret redaction (docs/refresh.md, "The refresh"): what reaches the model and the
document.

Each secret kind is shown beside ordinary project text that must come through untouched.
"""

from __future__ import annotations

import time

import pytest

from yak.memory.redaction import redact

ANTHROPIC = "sk-ant-api03-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" * 2
OPENAI = "sk-proj-" + "Zy9xWv8uTs7rQp6oNm5lKj4i"
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
AWS = "AKIAIOSFODNN7EXAMPLE"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
PRIVATE_KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"
    "QyNTUxOQAAACDxq2q5lKJ8\n-----END OPENSSH PRIVATE KEY-----"
)


@pytest.mark.parametrize(
    ("text", "secret", "flag", "marker"),
    [
        (
            "DATABASE_URL=postgres://admin:s3cr3tPw@db.example.com:5432/app",
            "s3cr3tPw",
            "redacted:url_password",
            "postgres://admin:[REDACTED:url-password]@db.example.com",
        ),
        (
            "redis://:p4ssw0rd@localhost:6379/0",
            "p4ssw0rd",
            "redacted:url_password",
            "redis://:[REDACTED:url-password]@localhost",
        ),
        (
            f"export ANTHROPIC_API_KEY={ANTHROPIC}",
            ANTHROPIC,
            "redacted:anthropic_key",
            "ANTHROPIC_API_KEY=[REDACTED:anthropic-key]",
        ),
        (f"OPENAI_API_KEY={OPENAI}", OPENAI, "redacted:openai_key", "[REDACTED:openai-key]"),
        (
            f"token {GITHUB} for CI",
            GITHUB,
            "redacted:github_token",
            "token [REDACTED:github-token]",
        ),
        (f"aws key {AWS}", AWS, "redacted:aws_key", "[REDACTED:aws-key]"),
        (
            f"Authorization: Bearer {JWT}",
            JWT,
            "redacted:bearer_token",
            "Bearer [REDACTED:bearer-token]",
        ),
        (f"the session cookie was {JWT}", JWT, "redacted:jwt", "[REDACTED:jwt]"),
        (
            'password = "hunter2hunter2"',
            "hunter2hunter2",
            "redacted:password_assignment",
            'password = "[REDACTED:password-assignment]"',
        ),
        (
            "db_password: Tr0ub4dor&3",
            "Tr0ub4dor&3",
            "redacted:password_assignment",
            "db_password: [REDACTED:password-assignment]",
        ),
        (
            '{"api_key": "A1b2C3d4E5f6G7h8"}',
            "A1b2C3d4E5f6G7h8",
            "redacted:password_assignment",
            '"api_key": "[REDACTED:password-assignment]"',
        ),
        (
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "redacted:password_assignment",
            "[REDACTED:password-assignment]",
        ),
        (
            f"key:\n{PRIVATE_KEY}\nafter",
            "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ",
            "redacted:private_key",
            "key:\n[REDACTED:private-key]\nafter",
        ),
        # Found by the detect-secrets library, not by Yak's own patterns:
        (
            "slack xoxb-123456789012-1234567890123-abcdefghijklmnopqrstuvwx",
            "xoxb-123456789012-1234567890123-abcdefghijklmnopqrstuvwx",
            "redacted:slack_token",
            "slack [REDACTED:slack-token]",
        ),
        (
            "stripe sk_live_abcdefghijklmnopqrstuvwx",
            "sk_live_abcdefghijklmnopqrstuvwx",
            "redacted:stripe_access_key",
            "[REDACTED:stripe-access-key]",
        ),
    ],
)
def test_secret_is_replaced_and_flagged_without_the_secret(text, secret, flag, marker):
    """The secret is gone, a marker stands in its place, the flag names the kind only."""
    redacted, findings = redact(text)
    assert secret not in redacted
    assert marker in redacted
    assert flag in findings
    assert all(secret not in f for f in findings)


@pytest.mark.parametrize(
    "text",
    [
        "- lint with ruff; pin Python 3.12",
        "- Secrets: stored in the OS keyring, never in the database",
        "the password field is validated in forms.py",
        "def login(password: str, api_key: str | None = None):",
        'api_key = os.environ["ANTHROPIC_API_KEY"]',
        "secret_key = settings.SECRET_KEY",
        "max_tokens = 8192",
        "commit 3f2a9c1b7d8e4f5a6b7c8d9e0f1a2b3c4d5e6f7a fixed the build",
        'id = "01HZXK3Y4B5C6D7E8F9G0H1J2K"',
        "https://user@example.com/path and https://example.com:8080/x",
        "- the API server runs on 10.0.0.12:8080",
    ],
)
def test_ordinary_project_text_is_untouched(text):
    """Code, prose, hashes, ids and URLs without a password come through byte for byte."""
    assert redact(text) == (text, ())


def test_redacting_redacted_text_changes_nothing():
    """A reply that repeats markers is not flagged again and not altered."""
    once, findings = redact(
        f'url postgres://u:pw12345@h/db and key {ANTHROPIC}\npassword = "hunter2hunter2"'
    )
    assert findings
    assert redact(once) == (once, ())


def test_every_occurrence_is_redacted_and_the_flag_listed_once():
    text = f"first {ANTHROPIC}\nsecond {ANTHROPIC}"
    redacted, findings = redact(text)
    assert redacted == "first [REDACTED:anthropic-key]\nsecond [REDACTED:anthropic-key]"
    assert findings == ("redacted:anthropic_key",)


def test_redaction_of_a_full_48000_character_budget():
    """A full transcript budget (48,000 characters with secrets sprinkled in) is redacted
    completely. The time is printed, not asserted (shared machine; benchmarks/bench_refresh.py
    has the figures)."""
    line = "- user: we lint with ruff and pin Python 3.12 in src/app.py; see docs/setup.md\n"
    secret_line = f"DATABASE_URL=postgres://admin:s3cr3tPw@db:5432/app key {ANTHROPIC}\n"
    text = (line * 9 + secret_line) * 60
    text = text[:48_000]
    started = time.perf_counter()
    redacted, findings = redact(text)
    elapsed = time.perf_counter() - started
    print(f"redact 48,000 chars: {elapsed * 1000:.0f} ms")
    assert "s3cr3tPw" not in redacted and ANTHROPIC not in redacted
    assert set(findings) == {"redacted:url_password", "redacted:anthropic_key"}
    assert redacted.count("[REDACTED:anthropic-key]") == text.count(ANTHROPIC)


def test_a_library_finding_deep_inside_a_long_line_is_redacted():
    """The library detectors look at windows around candidate tokens; a token in the middle
    of a 10,000-character line is still found, and the rest of the line is kept."""
    token = "xoxb-123456789012-1234567890123-abcdefghijklmnopqrstuvwx"
    line = "x " * 2500 + f"slack {token}" + " y" * 2500
    redacted, findings = redact(line)
    assert token not in redacted and findings == ("redacted:slack_token",)
    assert redacted == "x " * 2500 + "slack [REDACTED:slack-token]" + " y" * 2500


def test_a_comparison_with_a_secret_literal_is_redacted_by_the_library():
    """``password == "…"`` is not an assignment; detect-secrets' keyword detector finds it."""
    redacted, findings = redact('if password == "hunter2hunter2": login()')
    assert "hunter2hunter2" not in redacted and findings == ("redacted:secret_keyword",)


def test_a_secret_word_before_a_plain_word_in_prose_is_left_alone():
    """ "Reply for secret: noted." is a sentence, not a credential; "password: hunter2" is."""
    text, found = redact("Reply for secret: noted.")
    assert (text, found) == ("Reply for secret: noted.", ())
    text, found = redact("password: hunter2")
    assert "hunter2" not in text and found
