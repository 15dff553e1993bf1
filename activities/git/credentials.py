"""The service's credentials for origin, given to one git command through its environment alone: never in a
URL, an argument list, a log or the agent's environment. The helper answers only for the host the push URL
names, and only over https (http on the loopback interface, for tests)."""

from __future__ import annotations

from urllib.parse import urlsplit

# A credential helper that reads its answer from the push's own environment; git runs it through
# the shell, so the token is expanded there and appears in no argument list. `store` and `erase`
# (git tells helpers what worked) are ignored: the token is kept nowhere.
CREDENTIAL_HELPER = (
    '!f() { test "$1" = get || exit 0; host=; protocol=; '
    'while IFS== read -r key value; do case "$key" in host) host=$value;; protocol) protocol=$value;; esac; done; '
    'test "$protocol" = "$ISOLATOR_PUSH_PROTOCOL" && test "$host" = "$ISOLATOR_PUSH_HOST" || exit 0; '
    'printf "username=x-access-token\\npassword=%s\\n" "$ISOLATOR_PUSH_CREDENTIAL"; }; f'
)
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def credential_target(url: str) -> tuple[str, str] | None:
    """(protocol, host) the token may be given to for this push URL; None for any other (ssh uses
    the service's own keys, a plain-http host would see the token in clear)."""
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return "https", parts.netloc.rpartition("@")[2]
    if parts.scheme == "http" and parts.hostname in _LOOPBACK:
        return "http", parts.netloc.rpartition("@")[2]
    return None


def credential_variables(url: str | None, token: str | None) -> tuple[list[tuple[str, str]], dict[str, str]]:
    """The config pairs and variables that give `token` to git for `url`; none when it may not have it."""
    target = credential_target(url) if url else None
    if token is None or target is None:
        return [], {}
    return [("credential.helper", CREDENTIAL_HELPER)], {
        "ISOLATOR_PUSH_PROTOCOL": target[0], "ISOLATOR_PUSH_HOST": target[1], "ISOLATOR_PUSH_CREDENTIAL": token}
