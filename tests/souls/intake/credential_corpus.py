# ruff: noqa: RUF001  (Chinese chat is written with full-width punctuation)
"""Two corpora for the hygiene gate's credential rule, as chat people really send it.

``SECRETS``: one message per family of secret (60), each in its real format inside a
messy conversational line (English and Chinese, fillers, typos, people correcting
themselves). The families are those of gitleaks' and detect-secrets' rule sets and the
forms the issue names. ``ORDINARY``: messages that talk about passwords, tokens and keys
without holding one, plus the strings that look random and are not secret (commit
SHAs, UUIDs, base64 images, public keys, hashes, placeholders).

No secret-looking string is written in this file: each is assembled at import time from
a prefix and seeded random characters, so a secret scanner has nothing to flag here.
"""

from __future__ import annotations

import base64
import random
import string

__all__ = ["ORDINARY", "SECRETS"]

LOWER_HEX = "0123456789abcdef"
ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
UPPER_DIGITS = string.ascii_uppercase + string.digits
BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l".upper()


def rand(alphabet: str, n: int, seed: str) -> str:
    """``n`` characters of ``alphabet``, the same every run for the same ``seed``."""
    rng = random.Random(seed)
    while True:
        body = "".join(rng.choice(alphabet) for _ in range(n))
        # A real random body almost always mixes digits and letters; so do these.
        if n < 8 or not (set(alphabet) & set(string.digits)) or any(c.isdigit() for c in body):
            return body


def uuid(seed: str) -> str:
    h = rand(LOWER_HEX, 32, seed)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


def b64_of(prefix_hex: str, total: int, seed: str) -> str:
    """Base64 of DER-like bytes: a real key's first bytes, then seeded random bytes."""
    rng = random.Random(seed)
    raw = bytes.fromhex(prefix_hex) + bytes(rng.randrange(256) for _ in range(total))
    return base64.b64encode(raw).decode()


def noise(n: int, seed: str) -> bytes:
    rng = random.Random(seed)
    return bytes(rng.randrange(256) for _ in range(n))


def pem_lines(body: str) -> str:
    return "\n".join(body[i : i + 64] for i in range(0, len(body), 64))


def dash(word: str) -> str:
    return "-----" + word + "-----"


_RSA_PKCS1 = "308204a402010002820101"  # SEQUENCE, version 0, INTEGER modulus
_PKCS8 = "308204bd020100300d06092a864886f70d0101010500048204a7"
_OPENSSH = b"openssh-key-v1\x00".hex() + "0000000a6165733235362d637472"

SECRETS: dict[str, str] = {
    "aws access key id": "ok so the upload to s3 keeps failing, i set AWS_ACCESS_KEY_ID="
    + "AKIA"
    + rand(UPPER_DIGITS, 16, "aws-id")
    + " in the .env, did i do it wrong??",
    "aws secret key": "and the other one, aws_secret_access_key = "
    + rand(B64, 40, "aws-secret")
    + "  (copied from the console just now)",
    "github classic pat": "here's my token for the CI runner, pls dont share: ghp"
    + "_"
    + rand(ALNUM, 36, "ghp"),
    "github fine-grained pat": "new fine grained one since the old expired: github"
    + "_pat_"
    + rand(ALNUM, 22, "ghf1")
    + "_"
    + rand(ALNUM, 59, "ghf2"),
    "github oauth token": "the app stored gho"
    + "_"
    + rand(ALNUM, 36, "gho")
    + " in localStorage lol, that's bad right",
    "gitlab pat": "gitlab wants a PAT for the mirror: glpat"
    + "-"
    + rand(B64URL, 20, "glpat")
    + " — expires in 30 days",
    "gitlab runner token": "registered the runner with glrt"
    + "-"
    + rand(B64URL, 20, "glrt")
    + ", um actually maybe that was the old one",
    "openai project key": "use this for the demo: sk"
    + "-proj-"
    + rand(B64URL, 48, "oai-proj")
    + "T3Blbk"
    + "FJ"
    + rand(B64URL, 20, "oai-proj2"),
    "openai legacy key": "old key still works?? sk-"
    + rand(ALNUM, 20, "oai1")
    + "T3Blbk"
    + "FJ"
    + rand(ALNUM, 20, "oai2"),
    "anthropic key": "ANTHROPIC_API_KEY is sk" + "-ant-api03-" + rand(B64URL, 93, "ant") + "AA btw",
    "slack bot token": "bot token for #alerts: xox"
    + "b-"
    + rand(string.digits, 12, "xb1")
    + "-"
    + rand(string.digits, 13, "xb2")
    + "-"
    + rand(ALNUM, 24, "xb3"),
    "slack webhook url": "post the deploy msgs to https://hooks.slack"
    + ".com/services/T"
    + rand(UPPER_DIGITS, 8, "sw1")
    + "/B"
    + rand(UPPER_DIGITS, 10, "sw2")
    + "/"
    + rand(ALNUM, 24, "sw3"),
    "stripe live key": "billing uses sk" + "_live_" + rand(ALNUM, 24, "stl") + " since friday",
    "stripe test key": "for local testing just use sk"
    + "_test_"
    + rand(ALNUM, 24, "stt")
    + " it's only test mode anyway",
    "google api key": "maps embed key AI"
    + "za"
    + rand(B64URL, 35, "gapi")
    + " (restricted to our domain i think)",
    "google oauth secret": "client secret from the consent screen: GOCSPX"
    + "-"
    + rand(B64URL, 28, "gocspx"),
    "pem rsa key": "the deploy key, paste it into the vault later:\n"
    + dash("BEGIN RSA " + "PRIVATE KEY")
    + "\n"
    + pem_lines(b64_of(_RSA_PKCS1, 300, "rsa"))
    + "\n"
    + dash("END RSA " + "PRIVATE KEY"),
    "pem body without armour": "the key got mangled when i pasted, only this part is left "
    + b64_of(_PKCS8, 200, "pkcs8"),
    "openssh private key": "new laptop key:\n"
    + dash("BEGIN OPENSSH " + "PRIVATE KEY")
    + "\n"
    + pem_lines(b64_of(_OPENSSH, 180, "ossh")),
    "pgp private key": "exported my signing key, here:\n"
    + dash("BEGIN PGP " + "PRIVATE KEY BLOCK")
    + "\n\nlQdGBF"
    + rand(B64, 120, "pgp"),
    "json web token": "session cookie after login was eyJ"
    + "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ"
    + rand(B64URL, 40, "jwt1")
    + "."
    + rand(B64URL, 43, "jwt2"),
    "bearer header": "curl it with -H 'Authorization: Bearer "
    + rand(B64URL, 40, "bearer")
    + "' and it returns 200",
    "basic auth header": "the proxy needs Authorization: Basic "
    + base64.b64encode(b"deploy:" + rand(ALNUM, 14, "basic").encode()).decode(),
    "postgres url": "DATABASE_URL=postgres://app_user:"
    + rand(ALNUM, 16, "pg")
    + "@db.internal:5432/prod hope that helps",
    "redis url without user": "cache is at redis://:"
    + rand(ALNUM, 18, "redis")
    + "@10.0.3.7:6379/0",
    "yaml password": "config snippet:\n  db:\n    user: app\n    password: hunter2",
    "passwd assignment": "mysql_passwd=" + rand(ALNUM, 10, "passwd") + " # dont commit this",
    "english prose password": "fyi my password is Blue"
    + rand(string.digits, 4, "prose")
    + "moon, change it after you log in",
    "chinese prose password": "我的密码是"
    + rand(string.ascii_lowercase, 6, "zh1")
    + rand(string.digits, 3, "zh2")
    + "，你先登录看看，嗯不行就再说",
    "chinese label password": "服务器信息\n地址：10.0.0.8\n账号：root\n密码："
    + rand(ALNUM, 10, "zh-label"),
    "api key in json": 'the config is {"service": "geo", "api_key": "'
    + rand(LOWER_HEX, 32, "json")
    + '", "region": "eu"}',
    "client secret in env": "OAUTH_CLIENT_SECRET="
    + rand(B64URL, 40, "env")
    + "\nOAUTH_CLIENT_ID=web-frontend",
    "telegram bot token": "bot is live, token "
    + rand(string.digits, 10, "tg1")
    + ":AA"
    + rand(B64URL, 33, "tg2"),
    "discord bot token": "discord bot token: M"
    + rand(B64URL, 23, "dc1")
    + "."
    + rand(B64URL, 6, "dc2")
    + "."
    + rand(B64URL, 27, "dc3"),
    "twilio api key": "twilio SK" + rand(LOWER_HEX, 32, "twilio") + " for the sms fallback",
    "sendgrid key": "SENDGRID=SG." + rand(B64URL, 22, "sg1") + "." + rand(B64URL, 43, "sg2"),
    "mailchimp key": "mailchimp key " + rand(LOWER_HEX, 32, "mc") + "-us12 for the newsletter",
    "npm token": "npm publish fails, I put npm" + "_" + rand(ALNUM, 36, "npm") + " in .npmrc",
    "pypi token": "twine upload with pypi-AgEI" + "cHlwaS5vcmc" + rand(B64URL, 80, "pypi"),
    "digitalocean pat": "doctl auth init --access-token dop" + "_v1_" + rand(LOWER_HEX, 64, "do"),
    "vault token": "vault login hvs" + "." + rand(B64URL, 90, "vault"),
    "shopify token": "shop admin token shpat" + "_" + rand(LOWER_HEX, 32, "shop"),
    "hugging face token": "huggingface-cli login, token hf"
    + "_"
    + rand(string.ascii_letters, 34, "hf"),
    "age secret key": "the sops key file has AGE-SECRET" + "-KEY-1" + rand(BECH32, 58, "age"),
    "azure storage key": "conn string: DefaultEndpointsProtocol=https;AccountName=prodlogs;"
    + "AccountKey="
    + rand(B64, 86, "azure")
    + "==;EndpointSuffix=core.windows.net",
    "token split by zero-width space": "sending it in two bits so it doesnt get eaten: ghp"
    + "_"
    + rand(ALNUM, 18, "zw1")
    + "\u200b"
    + rand(ALNUM, 18, "zw2"),
    "azure ad client secret": "app registration secret "
    + rand(ALNUM, 3, "aad1")
    + "8Q~"
    + rand(ALNUM + "_~.-", 34, "aad2"),
    "square secret": "square sandbox secret sq0csp" + "-" + rand(B64URL, 43, "square"),
    "databricks token": "dbx token dapi" + rand(LOWER_HEX, 32, "dbx") + " for the notebook job",
    "heroku api key": "HEROKU_API_KEY=" + uuid("heroku") + " set in github secrets",
    "curl user password": "curl -u admin:"
    + rand(ALNUM, 12, "curl")
    + " https://jenkins.internal/api/json",
    "mysql password flag": "just run mysql -u root -p"
    + rand(ALNUM, 11, "mysql")
    + " -h 127.0.0.1 and check",
    "netrc entry": "my ~/.netrc has machine api.heroku.com login me@example.com password "
    + rand(ALNUM, 20, "netrc"),
    "docker registry auth": '~/.docker/config.json: {"auths": {"ghcr.io": {"auth": "'
    + base64.b64encode(b"bot:" + rand(ALNUM, 20, "docker").encode()).decode()
    + '"}}}',
    "kubernetes secret": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n"
    "  password: " + base64.b64encode(rand(ALNUM, 12, "k8s").encode()).decode(),
    "discord webhook": "alerts go to https://discord.com/api/webhooks/"
    + rand(string.digits, 18, "dw1")
    + "/"
    + rand(B64URL, 68, "dw2"),
    "alibaba access key": "阿里云的 AccessKey ID 是 LTAI"
    + rand(ALNUM, 20, "ali")
    + "，secret 在钉钉里",
    "dingtalk robot url": "钉钉机器人 https://oapi.dingtalk.com/robot/send?access_token="
    + rand(LOWER_HEX, 64, "ding"),
    "feishu webhook": "飞书群机器人地址 https://open.feishu.cn/open-apis/bot/v2/hook/"
    + uuid("feishu"),
    "groq key": "try groq, it's fast: gsk" + "_" + rand(ALNUM, 52, "groq"),
}

# A PNG's first bytes and seeded noise, as a data: URI inlines it.
_PNG = base64.b64encode(
    bytes.fromhex("89504e470d0a1a0a0000000d49484452") + noise(900, "png")
).decode()
_PUBLIC_KEY = base64.b64encode(
    bytes.fromhex("30820122300d06092a864886f70d01010105000382010f003082010a0282010100")
    + noise(200, "pub")
).decode()
_CERT = base64.b64encode(bytes.fromhex("30820377308202") + noise(220, "cert")).decode()

ORDINARY: list[str] = [
    "I forgot my password again, can you reset it? ugh third time this week",
    "the token expired so the build failed, rerun it pls",
    "reset your password here: https://accounts.example.com/reset-password?source=email",
    "my password is wrong apparently, or the caps lock was on lol",
    "the password is too short, it wants at least 12 characters now",
    "password must contain a digit and a symbol, that's the new policy",
    "the token is 8000 characters long which is why the header got rejected",
    "did you rotate the api key? no wait, I mean the deploy key",
    "Password: required (the form shows that in red when it's empty)",
    "invalid token: signature mismatch — happens when the clock drifts",
    "the access token: expires_in=3600 so an hour, then refresh",
    "max_tokens=4096 and prompt_tokens: 1234, completion_tokens: 88",
    "token limit is 8000: we hit it twice today",
    "Bearer tokens are described in RFC 6750, read section 2",
    "fixed in commit 3f9a2b1c0d4e5f67890abcdef1234567890abcde, see the PR",
    "git log says e83c5163316f89bfbde7d9ab23ca2e25604af290 is the culprit",
    "request id 550e8400-e29b-41d4-a716-446655440000 failed with 502",
    "the trace ids were " + uuid("trace1") + " and " + uuid("trace2"),
    'logo inline: <img src="data:image/png;base64,' + _PNG + '">',
    "colours: primary #1e90ff, danger #ff4d4f, muted #8c8c8c",
    "https://www.google.com/search?q=how+to+reset+password&oq=reset+password&sourceid=chrome"
    "&ie=UTF-8&utm_source=newsletter&utm_campaign=2024-06",
    'in the code it\'s just `password = os.environ["DB_PASSWORD"]`, nothing hardcoded',
    "token = request.headers.get('X-Api-Token') and then if token == expected_token: ok",
    "api_key: Optional[str] = None  # read from settings at startup",
    "def login(username: str, password: str) -> Session:",
    "secret_key = settings.SECRET_KEY",
    "export OPENAI_API_KEY=<your-api-key> before running the script",
    "set YOUR_API_KEY in the dashboard, then paste it where it says <your-api-key>",
    "docker run -e POSTGRES_PASSWORD=$POSTGRES_PASSWORD -p 5432:5432 postgres:16",
    "password: ${DB_PASSWORD}\nuser: ${DB_USER}",
    "the docs show sk-... as the key format, don't paste the real one in chat",
    'curl -H "Authorization: Bearer $TOKEN" https://api.example.com/v1/me',
    "secretKeyRef:\n  name: db-credentials\n  key: password",
    "token_ttl = 3600\npassword_min_length = 12\ntoken_url = 'https://auth.example.com/token'",
    "my pubkey for the server: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI"
    + rand(B64, 43, "ssh-pub")
    + " me@laptop",
    "public key below, it's fine to share:\n"
    + dash("BEGIN PUBLIC KEY")
    + "\n"
    + pem_lines(_PUBLIC_KEY)
    + "\n"
    + dash("END PUBLIC KEY"),
    "the cert:\n" + dash("BEGIN CERTIFICATE") + "\n" + pem_lines(_CERT),
    "fingerprint SHA256:" + rand(B64, 43, "fp") + " matches what the server shows",
    "password_hash: $2b$12$" + rand(B64, 53, "bcrypt").replace("+", ".") + " (bcrypt, cost 12)",
    "we should use a password manager, 1Password or Bitwarden, not a spreadsheet",
    "the secret to good sourdough is 100% hydration, trust me",
    "the account is 2fa-protected now so the password alone won't get you in",
    "token: expired, auth: required, secret: none — that's what the status page says",
    "postgres://user:<password>@localhost/db is the template, fill in yours",
    "see https://example.com/a:b@c and ssh://git@github.com:22/repo for the mirror",
    "tokenizer splits 'unbelievable' into 3 tokens: un, believ, able",
    "passwords are hashed with argon2id, never stored in plain text",
    "npm token list shows two tokens, revoke the older one",
    "gh auth login --with-token < mytoken.txt is how the CI does it",
    "key = 'user:123:profile' is the cache key, ttl 60s",
    "the primary key: id, the sort key: created_at",
    "我又忘了密码，能不能帮我重置一下？",
    "令牌过期了，所以部署失败了，重新跑一下吧",
    "验证码发到你手机了，五分钟内有效",
    "密码错误三次账号就被锁了，等半小时再试",
    "密码是生日那个吗？还是后来改过的？我记不清了",
    "密码是2024年改的，之后就没动过",
    "新密码至少要12位，还要有数字和符号",
    "数据库迁移超时，请检查密码重置邮件有没有收到",
    "token是什么？就是调用接口时带的那串东西",
    "这个项目的 API key 要去控制台申请，别用别人的",
    "提交记录 3f9a2b1c0d4e 里修了登录的 bug",
    "嗯……密码：请联系管理员获取，我这边没有",
    "the deploy to prod failed at 14:02 because the migration timed out",
    "pass: 2024-06-01 release, token: 2024-05-01T12:00:00Z",
    "the risk-adjusted task-management roadmap for 2025",
    "Asia AKIA sk- eyJ are just words here",
    "meeting notes: auth service owner is Dana; secrets rotation every 90 days",
    "password reset email sent, check spam",
    "I changed my password to something longer, don't ask me what lol",
]
