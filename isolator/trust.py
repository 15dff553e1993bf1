"""Who may talk to the bot: each platform's allow rule applied to a sender (pure functions, no I/O).

The API applies the rule to the facts a platform sends about the sender, before the message's
workflow starts, and hands the Admission to it: a refused message's workflow only answers (at most
once per conversation per hour) and ends with the outcome `refused`. The test adapter has no rule:
it serves `isolator dev` on its own machine. docs/trust.md explains the rules to an operator.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from isolator.contracts.trust import Admission, ClonePolicy
from isolator.settings import Settings

DESTRUCTIVE_COMMANDS = ("`/clone`, `/worktree remove --force`, `/worktree cleanup`, `/worktree restore` and "
                        "`/budget +<dollars>`")


@dataclass(frozen=True)
class GitHubSender:
    login: str
    # the `author_association` of the comment, issue or pull request: the sender's standing in the repository
    association: str
    is_bot: bool


@dataclass(frozen=True)
class SlackSender:
    user: str
    team: str  # the sender's own workspace (another one in a channel shared across workspaces)
    installed_team: str  # the workspace the signed event was delivered for


@dataclass(frozen=True)
class TelegramSender:
    user_id: int
    username: str | None


@dataclass(frozen=True)
class DiscordSender:
    user_id: str
    guild_id: str | None  # None in a direct message
    roles: frozenset[str]


def admit_github(sender: GitHubSender, settings: Settings) -> Admission:
    refused = None
    if sender.is_bot:
        if not _bot_listed(sender.login, settings.github_allowed_bots):
            refused = f"I do not take requests from bots. To allow `{sender.login}`, add it to `GITHUB_ALLOWED_BOTS`."
    elif sender.association not in settings.github_allowed_associations:
        allowed = _one_of(sorted(settings.github_allowed_associations))
        refused = (f"I only take requests from people whose association with this repository is {allowed}; "
                   f"yours is {sender.association}. To allow it, add `{sender.association}` to "
                   "`GITHUB_ALLOWED_ASSOCIATIONS`.")
    return Admission(
        sender=f"{sender.login} ({'bot' if sender.is_bot else sender.association})",
        refused=refused,
        admin_refused=_admin_refusal(sender.login.lower(), settings.github_admin_users, "GITHUB_ADMIN_USERS",
                                     f"your login `{sender.login}`"),
        clone=clone_policy(settings),
        user=sender.login.lower(),
    )


def admit_slack(sender: SlackSender, settings: Settings) -> Admission:
    teams = settings.slack_allowed_teams or frozenset({sender.installed_team})
    refused = None
    if sender.team not in teams:
        refused = ("I only take requests from the workspaces I am set up for. To allow yours, add its id "
                   f"`{sender.team}` to `SLACK_ALLOWED_TEAMS`.")
    elif settings.slack_allowed_users and sender.user not in settings.slack_allowed_users:
        refused = ("I only take requests from the people in `SLACK_ALLOWED_USERS`. To allow you, add your "
                   f"user id `{sender.user}` to it.")
    return Admission(
        sender=f"user {sender.user} of workspace {sender.team}",
        refused=refused,
        admin_refused=_admin_refusal(sender.user, settings.slack_admin_users, "SLACK_ADMIN_USERS",
                                     f"your user id `{sender.user}`"),
        clone=clone_policy(settings),
        user=sender.user,
    )


def admit_telegram(sender: TelegramSender, settings: Settings) -> Admission:
    user_id = str(sender.user_id)
    refused = None
    if user_id not in settings.telegram_allowed_users:
        refused = ("I only take requests from the people in `TELEGRAM_ALLOWED_USERS`. To allow you, add your "
                   f"user id `{user_id}` to it.")
    return Admission(
        sender=f"user {user_id}" + (f" (@{sender.username})" if sender.username else ""),
        refused=refused,
        admin_refused=_admin_refusal(user_id, settings.telegram_admin_users, "TELEGRAM_ADMIN_USERS",
                                     f"your user id `{user_id}`"),
        clone=clone_policy(settings),
        user=user_id,
    )


def admit_discord(sender: DiscordSender, settings: Settings) -> Admission:
    """Allowed: a user in DISCORD_ALLOWED_USERS anywhere; in a server of DISCORD_ALLOWED_GUILDS anyone,
    unless roles or users are listed: then a member with one of DISCORD_ALLOWED_ROLES."""
    users, roles = settings.discord_allowed_users, settings.discord_allowed_roles
    refused = None
    if sender.user_id in users:
        pass
    elif sender.guild_id is None:
        refused = ("In direct messages I only take requests from the people in `DISCORD_ALLOWED_USERS`. "
                   f"To allow you, add your user id `{sender.user_id}` to it.")
    elif sender.guild_id not in settings.discord_allowed_guilds:
        refused = ("I only take requests in the servers in `DISCORD_ALLOWED_GUILDS`. To allow this server, "
                   f"add its id `{sender.guild_id}` to it.")
    elif (roles or users) and not sender.roles & roles:
        refused = ("In this server I only take requests from members with a role in `DISCORD_ALLOWED_ROLES` "
                   "or from the people in `DISCORD_ALLOWED_USERS`. To allow you, give yourself one of those "
                   f"roles, or add your user id `{sender.user_id}` to `DISCORD_ALLOWED_USERS`.")
    return Admission(
        sender=f"user {sender.user_id}" + (f" in server {sender.guild_id}" if sender.guild_id else " (direct message)"),
        refused=refused,
        admin_refused=_admin_refusal(sender.user_id, settings.discord_admin_users, "DISCORD_ADMIN_USERS",
                                     f"your user id `{sender.user_id}`"),
        clone=clone_policy(settings),
        user=sender.user_id,
    )


def unset_rule(platform: str, settings: Settings) -> str | None:
    """For Telegram and Discord without a rule (everyone is refused): the line to log at start."""
    if platform == "telegram" and not settings.telegram_allowed_users:
        return ("TELEGRAM_ALLOWED_USERS is not set: every Telegram message is refused. To allow people, set "
                "TELEGRAM_ALLOWED_USERS=<user id>,<user id> (a refused person is told their id).")
    if platform == "discord" and not (settings.discord_allowed_guilds or settings.discord_allowed_users):
        return ("DISCORD_ALLOWED_GUILDS is not set: every Discord message is refused. To allow a server, set "
                "DISCORD_ALLOWED_GUILDS=<server id> (a refused person is told it), and "
                "DISCORD_ALLOWED_USERS=<user id> for direct messages.")
    return None


def clone_policy(settings: Settings) -> ClonePolicy:
    """What `/clone` takes from chat: URLs on CLONE_ALLOWED_HOSTS (unset: the GitHub host), local paths
    only under CLONE_ALLOWED_ROOTS (unset: none)."""
    hosts = settings.clone_allowed_hosts
    if hosts is None:
        hosts = frozenset({github_host(settings.github_api_url)})
    return ClonePolicy(hosts=sorted(hosts), roots=sorted(settings.clone_allowed_roots))


def github_host(api_url: str) -> str:
    """The host repositories are cloned from: `api.github.com` -> `github.com`; an Enterprise server's own host."""
    host = (urlsplit(api_url).hostname or "github.com").lower()
    return host.removeprefix("api.")


def _bot_listed(login: str, allowed: frozenset[str]) -> bool:
    login = login.lower()
    return login in allowed or login.removesuffix("[bot]") in allowed or f"{login}[bot]" in allowed


def _admin_refusal(user: str, admins: frozenset[str], variable: str, who: str) -> str | None:
    if not admins or user in admins:
        return None
    return f"Only the people in `{variable}` may run {DESTRUCTIVE_COMMANDS} here. To allow you, add {who} to it."


def _one_of(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
