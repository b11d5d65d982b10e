"""What the package shows (a repr, a str, an exception's message) is redacted as the tool
redacts what it prints (internal/redact): the secret values it was given (storage options the
tool marks secret), and what has the shape of a secret whether given or not: the password of a
URI (scheme://user:PASSWORD@host), the value of a sensitive key in key=value, key = 'value' and
"key": "value" form, a JSON Web Token. The rules are the tool's, restated here because a repr
never reaches the tool."""

from __future__ import annotations

import re
from typing import Iterable
from urllib.parse import quote

#: What a secret is replaced with, as the tool (and Spark) prints it.
MASK = "*********(redacted)"

# The parts of a key that make its value a secret (internal/redact sensitiveWords), and the
# keys with such a part that name none (a list's continuation token).
_SENSITIVE_WORDS = ("secret", "password", "passwd", "pwd", "token", "signature", "credential",
                    "accesskey", "access.key", "access_key", "accountkey", "account.key", "account_key",
                    "privatekey", "private.key", "private_key")
_NOT_SECRET = frozenset({"continuationtoken"})
_SAS = re.compile(r"(?:^|[._-])sas(?:$|[._-]|token|key)")

# The shortest secret looked for by value (shorter ones would match ordinary text).
_MIN_SECRET = 4


def sensitive_key(key: str) -> bool:
    """Whether the value of a setting, option or parameter named key is a secret (the tool's
    redact.SensitiveKey)."""
    k = key.lower()
    if k in _NOT_SECRET:
        return False
    if k == "sig" or _SAS.search(k):
        return True
    return any(w in k for w in _SENSITIVE_WORDS)


_AUTHORITY = re.compile(r"://([^/?#\s\"'<>\\`]*)")
_KEY_VALUE = re.compile(r"(?P<key>[A-Za-z0-9_.\-]+)[ ]*=[ ]*(?P<value>'[^']*'?|\"[^\"]*\"?|[^\s&;,'\"<>()\[\]{}\\`/]*)")
_JSON_MEMBER = re.compile(r"\"(?P<key>[^\"\\]*)\"[ \t]*:[ \t]*\"(?P<value>(?:[^\"\\]|\\.)*)\"")
_JWT = re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_.-]*")


def _passwords(text: str) -> str:
    def one(m: "re.Match[str]") -> str:
        auth = m.group(1)
        at = auth.rfind("@")
        if at < 0:
            return m.group(0)
        colon = auth.find(":", 0, at)
        if colon < 0 or colon + 1 == at or auth[colon + 1:at] == MASK:
            return m.group(0)
        return "://" + auth[:colon + 1] + MASK + auth[at:]
    return _AUTHORITY.sub(one, text)


def _key_values(text: str) -> str:
    def one(m: "re.Match[str]") -> str:
        key, value = m.group("key"), m.group("value")
        start = m.start()
        if start > 0 and text[start - 1] == "/":
            return m.group(0)  # a partition folder named token=…
        if not value or not sensitive_key(key) or text.startswith(MASK, m.start("value")):
            return m.group(0)
        if value[0] in "'\"":
            inner = value[1:-1] if len(value) > 1 and value[-1] == value[0] else value[1:]
            if not inner:
                return m.group(0)
            closing = value[0] if len(value) > 1 and value[-1] == value[0] else ""
            return m.group(0)[:m.start("value") - start] + value[0] + MASK + closing
        if m.end() < len(text) and text[m.end()] == "/":
            return m.group(0)  # a path segment, not a setting
        return m.group(0)[:m.start("value") - start] + MASK
    return _KEY_VALUE.sub(one, text)


def _json_members(text: str) -> str:
    def one(m: "re.Match[str]") -> str:
        if not sensitive_key(m.group("key")) or not m.group("value") or m.group("value").startswith(MASK):
            return m.group(0)
        start = m.start()
        return m.group(0)[:m.start("value") - start] + MASK + "\""
    return _JSON_MEMBER.sub(one, text)


def _jwts(text: str) -> str:
    def one(m: "re.Match[str]") -> str:
        t = m.group(0)
        return MASK if t.count(".") >= 2 and len(t) >= 20 else t
    return _JWT.sub(one, text)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """text with every secret given, and every secret of a recognisable shape, masked."""
    forms = set()
    for s in secrets:
        if s and len(s) >= _MIN_SECRET:
            forms.update({s, quote(s, safe=""), quote(s, safe="/")})
    for s in sorted(forms, key=len, reverse=True):
        text = text.replace(s, MASK)
    return _jwts(_json_members(_key_values(_passwords(text))))
