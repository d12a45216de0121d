"""Credentials out of everything written down or shown: the one rule for URLs, option names and messages.

A URL the user gives (``--base-url``, ``--generator http:URL``, a web evaluation's URLs) may carry a credential in two
places: its user info (``https://user:password@host/``) and its query string (``?token=sk-...``). `public_url` is the
URL as it may be stored or shown: user info is left out, the value of every query parameter whose name looks
like a credential (`looks_secret`) or whose value looks like a key (`looks_like_key`) becomes ``***``, the fragment
is dropped; other parameters stay as given, so ``?collection=a`` and ``?collection=b`` remain two configurations.
`redact_urls` applies it to every URL inside a text (an error message, a generator spec), and is the last step
before a message reaches stderr, a log, a report or a database row.

What counts as a credential's name: a word of the name (split at punctuation, underscores and camelCase) that ends
with one of `SECRET_WORDS` (``apikey``, ``access_token``, ``X-Amz-Signature``, ``AWSAccessKeyId``, ``client_secret``)
or is one of `SECRET_NAMES` (``sig``, ``code``, ``auth``, ``pass``); ``max_tokens`` is not one. A value looks like a
key when it starts like the keys of the common providers (``sk-``, ``ghp_``, ``AKIA``, a JWT's ``eyJ``...). A
credential under another name and of another shape cannot be told from data: pass it in a header instead
(docs/answers/generate.md, "Passing a token safely").
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

SECRET_WORDS = ("key", "secret", "token", "password", "passwd", "pwd", "authorization", "signature", "credential",
                "credentials")  # a word that is one of these or ends with one: apikey, access_token, client_secret
SECRET_NAMES = ("keys", "pass", "auth", "sig", "code", "session", "sessionid", "sid", "jwt", "bearer", "otp")  # whole
KEY_PREFIXES = ("sk-", "sk_", "pk_", "rk_", "ghp_", "gho_", "ghs_", "github_pat_", "glpat-", "xoxb-", "xoxp-", "AKIA",
                "ASIA", "AIza", "eyJ", "hf_", "Bearer ")
MASK = "***"
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>(){}]+")


def looks_secret(name: str) -> bool:
    """Whether an option, header or query parameter named `name` holds a credential (see the module's text)."""
    words = [w.lower() for part in re.split(r"[\W_]+", name) for w in _WORD.findall(part)] + [name.lower()]
    return any(word in SECRET_NAMES or word.endswith(SECRET_WORDS) for word in words)


def looks_like_key(value: str) -> bool:
    """Whether a value has the shape of a provider's key or token, whatever it is called."""
    return value.strip().startswith(KEY_PREFIXES)


def url_credentials(url: str) -> list[str]:
    """What in `url` is a credential: ``user info`` and ``query parameter 'NAME'``, in order (none: [])."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return ["an unreadable URL"]
    found = ["user info"] if parts.username is not None or parts.password is not None else []
    return found + [f"query parameter {name!r}" for name, value in parse_qsl(parts.query, keep_blank_values=True)
                    if looks_secret(name) or looks_like_key(value)]


def _host(parts) -> str:
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    try:
        port = parts.port
    except ValueError:  # a port that is not a number: keep what was written after the host
        port = parts.netloc.rpartition("@")[2].rpartition(":")[2]
    return f"{host}:{port}" if port else host


def public_url(url: str | None) -> str | None:
    """`url` as it may be written down: no user info, credential values in the query as ``***``, no
    fragment. A URL without any of them comes back unchanged (so cache keys built on it stay stable)."""
    if not url:
        return None
    try:
        parts = urlsplit(url)
    except ValueError:  # an unclosed [ in the host: nothing of it can be shown safely
        return "(an unreadable URL)"
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    secret = [looks_secret(name) or looks_like_key(value) for name, value in pairs]
    if "@" not in parts.netloc and not parts.fragment and not any(secret):
        return url
    query = parts.query if not any(secret) else "&".join(
        f"{quote(name, safe='')}={MASK if hidden else quote(value, safe='')}"
        for (name, value), hidden in zip(pairs, secret))
    return urlunsplit((parts.scheme, _host(parts), parts.path, query, ""))


def redact_urls(text: str) -> str:
    """`text` with every URL in it written as `public_url` writes it (an error message, a ``http:URL`` spec)."""
    if "://" not in text:
        return text
    return _URL.sub(lambda match: public_url(match.group(0)) or "", text)
