"""Every named rule of evolve/transcripts/data/secrets.toml, one by one: found, and left alone.

What it must find, plain, inside JSON and JSON-escaped as a tool input shows it; what it
must leave (and a git sha, a UUID and ordinary words, for every rule).

Secrets are built by concatenation so that no scanner mistakes this file for a leak.
"""

from __future__ import annotations

import json

import pytest

from evolve.transcripts.redact import MARK, find_secrets, redact, rules

R = "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY"  # 32 mixed characters
HEX = "0123456789abcdef" * 4  # 64 hex
PEM = "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2Pvd\nkUX4/+mBtJmo8Wi8zHnH0n7RGp7mF/v7hRxSYsIe"
KEY_BLOCK = "-----BEGIN EC " + "PRIVATE KEY-----\n" + PEM + "\n-----END EC " + "PRIVATE KEY-----"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
JWT = "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0" + ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"

# Shared by every rule: none of these may ever be flagged.
ORDINARY = [
    "commit 3f2a9c1d4e5b6a7c8d9e0f1a2b3c4d5e6f7a8b9c",  # a git sha
    "session 123e4567-e89b-12d3-a456-426614174000 resumed",  # a UUID
    "The password reset flow uses a token bucket and a secret handshake.",  # ordinary words
]

# kind → (texts holding the secret, {} marks it; texts that hold no secret of any kind)
CASES: dict[str, tuple[list[tuple[str, str]], list[str]]] = {
    "private-key": (
        [("cat key.pem\n{}\nok", KEY_BLOCK)],
        ["-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----"],
    ),
    "anthropic-key": (
        [("ANTHROPIC_API_KEY={}", "sk-ant-" + "api03-" + R)],
        ["the sk-ant- prefix is documented"],
    ),
    "openai-key": ([("key={}", "sk-" + "proj-" + R), ("{} used", "sk-" + R)], ["task-list and desk-lamp"]),
    "aws-access-key-id": (
        [("id {}", "AKIA" + "IOSFODNN7EXAMPLQ")],
        ["AKIA is 20 chars long", "akiaiosfodnn7examplq"],
    ),
    "aws-secret-key": (
        [("aws_secret_access_key = {}", AWS_SECRET), ('\\"SecretAccessKey\\": \\"{}\\"', AWS_SECRET)],
        ["aws_secret_access_key = ${AWS_SECRET}"],
    ),
    "github-token": (
        [("token {}", "ghp_" + R + "Zz12"), ("GH={}", "github_pat_" + "11ABCDEFG0" + R)],
        ["ghp_ is a prefix", "github_pat_short"],
    ),
    "gitlab-token": (
        [("GITLAB={} ok", "glpat-" + R[:20]), ("register {}", "GR1348941" + R[:20])],
        ["glpat- tokens expire", "the glrt-runner docs"],
    ),
    "slack-token": (
        [
            ("SLACK={}", "xoxb-" + "123456789012-1234567890123-" + R[:24]),
            ("app {}", "xapp-1-A0123BCDE-1234567890-" + HEX[:20]),
        ],
        ["xoxb- bot tokens", "xapp-1 is the app level"],
    ),
    "slack-webhook": (
        [("POST {} done", "https://hooks.slack.com/services/" + "T0123ABCD/B0123ABCD/" + R[:24])],
        ["https://hooks.slack.com/ is Slack's webhook host"],
    ),
    "google-api-key": ([("?key={}&q=1", "AIza" + R + "abc")], ["AIzaSy is how they start"]),
    "stripe-key": (
        [("STRIPE={}", "sk_" + "live_" + R[:24]), ("hook {}", "whsec_" + R)],
        ["pk_" + "live_" + R[:24] + " is publishable", "sk_live_ keys are secret"],
    ),
    "npm-token": ([("//registry.npmjs.org/:_authToken={}", "npm_" + R + "Ab12")], ["npm_config_cache=/tmp"]),
    "pypi-token": ([("password = {}", "pypi-AgEIcHlwaS5vcmc" + R * 2)], ["pypi-upload is the action"]),
    "huggingface-token": ([("HF_TOKEN={}", "hf_" + R + "Zz")], ["hf_hub_download(repo_id)", "hf_transfer"]),
    "sendgrid-token": ([("key {}", "SG." + R[:22] + "." + R + R[:11])], ["SG.com is a domain", "SG.a.b"]),
    "azure-connection-string": (
        [("DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={};EndpointSuffix=core", R + R + "==")],
        ["AccountKey=<key>", "the AccountKey setting"],
    ),
    "azure-client-secret": ([("secret {} set", "abc" + "8Q~" + R[:32])], ["a Q~ tilde", "use 8Q~ for short"]),
    "sentry-dsn": (
        [("SENTRY_DSN=https://{}@o123.ingest.sentry.io/456", HEX[:32])],
        ["https://sentry.io/organizations/acme/", "https://public@o1.ingest.sentry.io/2"],
    ),
    "sentry-token": ([("auth {}", "sntryu_" + HEX)], ["sntryu_ tokens are per user"]),
    "digitalocean-token": ([("DO={}", "dop_v1_" + HEX)], ["dop_v1_ is the prefix"]),
    "shopify-token": ([("X-Shopify-Access-Token: {}", "shpat_" + HEX[:32])], ["shpat_ tokens"]),
    "databricks-token": ([("DATABRICKS={}", "dapi" + HEX[:32])], ["dapi is their API", "dapi" + "x" * 32]),
    "vault-token": ([("VAULT={}", "hvs." + R)], ["hvs.example"]),
    "age-secret-key": (
        [("key {}", "AGE-SECRET-KEY-1" + ("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" * 2)[:58])],
        ["AGE-SECRET-KEY-1 keys"],
    ),
    "service-token": (
        [
            ("LINEAR={}", "lin_api_" + R + R[:8]),
            ("PULUMI={}", "pul-" + HEX[:40]),
            ("key {}", "PMAK-" + HEX[:24] + "-" + HEX[:34]),
        ],
        ["lin_api_ and pul- and PMAK- prefixes"],
    ),
    "jwt": ([("Cookie session={}", JWT)], ["JWTs start with eyJ", "eyJhbGciOiJIUzI1NiJ9.only-one-part"]),
    "basic-auth": (
        [
            ('curl -H "Authorization: Basic {}" https://x', "YWRtaW46aHVudGVyMjI="),
            ('\\"Authorization\\": \\"Basic {}\\"', "dXNlcjpwYXNzd29yZDE="),
        ],
        ["Basic authentication works", "Authorization: Basic <credentials>"],
    ),
    "bearer-token": (
        [("Authorization: Bearer {}", "abcdef1234567890" + R)],
        ["Authorization: Bearer ${TOKEN}", "a bearer of news"],
    ),
    "url-password": (
        [
            ("DATABASE_URL=postgres://app:{}@db:5432/app", "s3cr3t-pw"),
            ("git clone https://me:{}@git.example/x", "hunter22"),
            ("REDIS_URL=redis://:{}@cache:6379/0", "R3disPassw0rdQ"),  # no user name
        ],
        ["postgres://user:${DB_PASSWORD}@host/db", "ssh://git@github.com/o/r.git", "redis://:@cache:6379"],
    ),
    "user-password": (
        [
            ("curl -u admin:{} https://api", "hunter22x"),
            ("curl --user 'me:{}' x", "s3cret!pw"),
            ("curl -uadmin:{} https://x", "CurlNoSpace77"),  # the user glued to -u
            ("curl -s -u'admin:{}' https://x", "CurlNoSpace77"),
            ("curl -su admin:{} https://x", "CurlNoSpace77"),  # -u last of a cluster (attack on main)
            ("curl -fsSLu 'admin:{}' https://x", "CurlNoSpace77"),
            ("wget --user=me:{} https://x", "s3cret!pw"),
        ],
        [
            "docker run -u 1000:1000 image",
            "curl -u1000:1000 x",
            "cc -undefined:dynamic_lookup main.o",
            "curl -u $USER:$PASS https://api",
            "git push -u origin main",
            "never `curl -u user:...` in a script",
        ],
    ),
    "netrc-password": (  # found by the attack on the fixed main: a `cat ~/.netrc` went out whole
        [
            ("machine api.example.com login me password {}", "N3trcPassw0rd"),
            ("machine api.example.com\n  login me\n  password {}\nmachine other", "N3trcPassw0rd"),
        ],
        [
            "the machine learning password policy",
            "machine x login me password $NETRC_PASSWORD",
            "machine x login me password hunter",
        ],
    ),
    "mysql-password": (
        [
            ("mysql -u root -p{} shop", "S3cretPw"),
            ("mysqldump -h db -p{} --all", "hunter22"),
            ("mysql -u root -p'{}' shop", "MysqlQuote99x"),
            ('mysql -u root -p"{}" shop', "it's-Qu0ted"),
        ],
        [
            "mysql -u root -p shop",
            "mysql -u root -p'$MYSQL_PWD' shop",
            "mysql -P 3306 -h db",
            'mysql -p"$MYSQL_PASSWORD"',
            "never put a password on the command line (`mysql -p...`)",
        ],
    ),
    "cli-password": (
        [
            ("docker login -u me -p {} registry.example", "D0ckerHubPassw0rd"),
            ("podman login --password {} quay.io", "P0dmanPassw0rd"),
            ("sshpass -p '{}' ssh deploy@host", "S5hpassW0rd"),
            ("oc login -u dev -p {} https://api.cluster", "Dev9Pass123"),
            ("mongosh -u admin -p {} --host db", "M0ngoPw99x"),
            ("twine upload -u __token__ -p {} dist/*", "Tw1neUpload"),
            ("redis-cli -h cache -a {} ping", "R3disCliPw9"),
            ("kubectl --token {} get pods", "k8sT0kenValue99"),
            ("keytool -list -storepass {} -keystore ks", "Ch4ngeIt99"),
            ("az ad sp create --client-secret {} --name x", "CorrectHorse"),
        ],
        [
            "docker run -p 8080:80 image",
            "docker login -u me --password-stdin registry.example",
            "docker login -u me -p $DOCKER_PASSWORD",
            "gh auth login --with-token < token.txt",
            "use --token with care, or pass --password only once",
            "  --token TOKEN     the API token\n  --api-key KEY     the key",
            "llm --max-tokens 4096",
            "mongosh --port 27017",
            "mkdir -p build/out && git add -p",
        ],
    ),
}
ASSIGNMENT_CASES = [  # kind, text with {} for the secret, the secret
    ("password", "DB_PASSWORD={}", "hunter2!"),
    ("password", '{{"password": "{}"}}', "correct-horse"),
    ("password", '{{\\"password\\": \\"{}\\"}}', "correct-horse"),  # JSON-escaped, as a tool input
    ("password", 'curl -d \'{{"user":"me","password":"{}"}}\' https://api', "hunter3hunter3"),
    ("secret", "CLIENT_SECRET={}", "supersecretvalue"),
    ("token", "auth_token='{}'", "abc123def456"),
    ("api-key", "api-key: {}", "k3y-v4lue-x1"),
    ("key", "export SIGNING_KEY={}", "a1b2c3d4e5f6g7h8"),
    ("key", "MAPBOX_PRIVATE_KEY={}", "qw3rty-" + R),
    # in a file an agent writes (a bundle shows the start of the new text of an edit)
    ("key", '{{"aws_secret_access_key": "{}"}}', "wJalrXUtnFEMI/K7MDENG/Q7PxRfiCYEXAMPLEKEY"),
    ("key", "secret_key: {}", "Zx81kPq02LmNb73Vc5"),
    ("key", 'private_key = "{}"', "Zx81kPq02LmNb73Vc5"),
]


def test_every_rule_has_true_and_false_examples() -> None:
    kinds = {rule.kind for rule in rules()}
    assert kinds == set(CASES), kinds ^ set(CASES)
    assert all(hits and misses for hits, misses in CASES.values())


@pytest.mark.parametrize("kind", sorted(CASES))
def test_a_rule_finds_its_secret_plain_in_json_and_json_escaped(kind) -> None:
    hits, _misses = CASES[kind]
    for around, secret in hits:
        for text in (around.format(secret), json.dumps({"cmd": around.format(secret)})):
            found = find_secrets(text)
            assert [k for k, _, _ in found] == [kind], text
            redacted = redact(text)
            assert secret.replace("\n", "\\n") not in redacted and secret not in redacted, redacted
            assert f"{MARK}{kind}]" in redacted and find_secrets(redacted) == []


@pytest.mark.parametrize("kind", sorted(CASES))
def test_a_rule_leaves_what_only_looks_like_its_secret(kind) -> None:
    _hits, misses = CASES[kind]
    for text in misses + ORDINARY:
        assert find_secrets(text) == [], text
        assert redact(text) == text


@pytest.mark.parametrize(("kind", "around", "secret"), ASSIGNMENT_CASES)
def test_assignments_are_found_whatever_the_quoting(kind, around, secret) -> None:
    text = around.format(secret)
    assert [k for k, _, _ in find_secrets(text)] == [kind], text
    assert secret not in redact(text)


@pytest.mark.parametrize(
    "text",
    [
        "SORT_KEY=created_at",
        "PRIMARY_KEY=id",
        "cache_key = key_for(item)",
        "MONKEY=banana1234567",
        "access_key: str",
        "private_key = load_key(path)",
        "secret_key = os.environ['SECRET_KEY']",
    ],
)
def test_code_that_names_keys_is_not_a_secret(text) -> None:
    assert find_secrets(text) == []
