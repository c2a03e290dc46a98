"""A shared store's address as libpq reads it, and its secrets kept out of everything shown.

The address (a postgresql:// URL or libpq's key=value form) is parsed by libpq's own parser
(psycopg.conninfo.conninfo_to_dict, PQconninfoParse): a password holding `#` or `?`, which a
URL parser reads as the start of a fragment or a query, is libpq's password all the same, and
what is shown is libpq's reading with the password taken out (`shown`). An address libpq cannot
read is never echoed (its error quotes the address back, a badly percent-encoded password
included): it is one sentence (`UNREADABLE`). `scrub` takes every password it can find out of
any text (a log record, an error from the server, an argv) before it is printed, logged, kept
or shown; `shown_argv` is a command line as the log records it."""

from __future__ import annotations

import os
import re
from urllib.parse import quote, quote_plus

ENV = "SILICONBENCH_STORE"
SECRET_KEYS = ("password", "sslpassword")   # libpq's keywords that hold a secret
HIDDEN = "***"
UNREADABLE = ("The shared store's address cannot be read (libpq refused its form; it is not "
              "repeated here, as it may hold a password); give postgresql://user@host/db or "
              "service=NAME, with the password in ~/.pgpass.")

# Passwords met in this process (--store, SILICONBENCH_STORE, an address typed in
# Preferences): scrub takes them out of any text, wherever they turn up.
_known: set[str] = set()


class UnreadableAddress(ValueError):
    """An address libpq cannot parse; str() is UNREADABLE, which never repeats it."""

    def __init__(self) -> None:
        super().__init__(UNREADABLE)


def is_url(text) -> bool:
    """Whether a store given as text names a PostgreSQL server: a postgresql:// URL or libpq's
    key=value form (service=lab, host=... dbname=...)."""
    return isinstance(text, str) and (text.startswith(("postgresql://", "postgres://"))
                                      or re.match(r"^\s*\w+\s*=", text) is not None)


def parse(url: str) -> dict[str, str]:
    """libpq's reading of the address (keyword: value); UnreadableAddress when it has none.
    Any password in it is remembered, for scrub."""
    try:
        from psycopg.conninfo import conninfo_to_dict
    except ImportError:      # without psycopg nothing connects; hide what looks like one
        return _without_libpq(url)
    try:
        given = conninfo_to_dict(url)
    except Exception:        # libpq's message quotes the address: never shown
        _remember_raw(url)
        raise UnreadableAddress() from None
    for key in SECRET_KEYS:
        if given.get(key):
            _known.add(str(given[key]))
    return {k: str(v) for k, v in given.items()}


def shown(url: str) -> str:
    """The address as SiliconBench shows and keeps it: libpq's reading without its password
    (key=value form); UnreadableAddress when libpq cannot read it."""
    given = {k: v for k, v in parse(url).items() if k not in SECRET_KEYS}
    try:
        from psycopg.conninfo import make_conninfo
    except ImportError:
        return " ".join(f"{k}={v}" for k, v in given.items())
    return make_conninfo(**given)


def remember(url: str | None) -> None:
    """Note the password of an address this process was given (parsed, or the text around a
    URL's userinfo where libpq cannot read it), so that scrub hides it anywhere."""
    if not url or not is_url(url):
        return
    try:
        parse(url)
    except UnreadableAddress:
        pass


def _remember_raw(url: str) -> None:
    """The likely password of an address libpq cannot read: a URL's text between the user's
    colon and the last @ before the host, and a password= value."""
    m = re.match(r"^postgres(?:ql)?://[^:/@]*:([^/]*)@", url)
    if m and m.group(1):
        _known.add(m.group(1))
    for m in re.finditer(r"(?:^|[\s?&])(?:ssl)?password\s*=\s*('(?:[^'\\]|\\.)*'|[^\s&]+)",
                         url):
        _known.add(m.group(1).strip("'"))


def _without_libpq(url: str) -> dict[str, str]:
    _remember_raw(url)
    return {"address": scrub(url)}


def scrub(text: str) -> str:
    """`text` with every password it holds hidden: the passwords this process was given (as
    typed, percent-encoded and quoted), any URL's userinfo password and any password= value."""
    if not isinstance(text, str) or not text:
        return text
    for secret in sorted(_known | _env_secrets(), key=len, reverse=True):
        for form in {secret, quote(secret, safe=""), quote_plus(secret, safe=""),
                     quote(secret), repr(secret)[1:-1]}:
            if form:
                text = text.replace(form, HIDDEN)
    text = re.sub(r"(postgres(?:ql)?://[^:/@\s\"']*):[^@\s\"']*@", rf"\1:{HIDDEN}@", text)
    return re.sub(r"((?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&\"']+)", rf"\1{HIDDEN}",
                  text, flags=re.IGNORECASE)


def _env_secrets() -> set[str]:
    found = set()
    if os.environ.get("PGPASSWORD"):
        found.add(os.environ["PGPASSWORD"])
    url = os.environ.get(ENV)
    if url and is_url(url):
        try:
            given = parse(url)
        except UnreadableAddress:
            return found | _known
        found |= {given[k] for k in SECRET_KEYS if given.get(k)}
    return found


def shown_argv(argv: list[str]) -> list[str]:
    """A command line as the log records it: every --store value (also --store=...) and every
    argument that is an address (store init URL) shown without its password, an unreadable
    one not at all; everything else scrubbed of the passwords known."""
    out, after_flag = [], False
    for arg in argv:
        value, prefix = arg, ""
        flag, eq, rest = arg.partition("=")
        if eq and _is_store_flag(flag):
            prefix, value = flag + "=", rest
        if after_flag or prefix or is_url(value):
            remember(value)
            try:
                value = shown(value) if is_url(value) else "(not an address)"
            except UnreadableAddress:
                value = "(an unreadable address)"
            out.append(prefix + value)
        else:
            out.append(scrub(arg))
        after_flag = _is_store_flag(arg)
    return out


def _is_store_flag(arg: str) -> bool:
    """--store, or what argparse takes for it (--stor, --sto)."""
    return len(arg) >= 5 and "--store".startswith(arg)
