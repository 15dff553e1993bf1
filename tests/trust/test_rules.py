"""The allow rules and what `/clone` takes from chat, as pure functions: no service needed."""

from __future__ import annotations

import pytest

from isolator.clone_rules import clone_refusal, url_host
from isolator.contracts.trust import ClonePolicy
from isolator.settings import ConfigurationError, Settings, load_settings
from isolator.trust import (
    DiscordSender,
    GitHubSender,
    SlackSender,
    TelegramSender,
    admit_discord,
    admit_github,
    admit_slack,
    admit_telegram,
    clone_policy,
    github_host,
    unset_rule,
)
from workflows.chat.commands import destroys_or_restores, parse_command


@pytest.fixture
def rules() -> Settings:
    return load_settings(database_url="postgresql://unused")


def test_github_takes_owners_members_and_collaborators_and_only_listed_bots(rules: Settings) -> None:
    for association in ("OWNER", "MEMBER", "COLLABORATOR"):
        assert admit_github(GitHubSender("ada", association, False), rules).refused is None
    for association in ("CONTRIBUTOR", "FIRST_TIME_CONTRIBUTOR", "NONE"):
        assert f"yours is {association}" in admit_github(GitHubSender("eve", association, False), rules).refused
    assert "GITHUB_ALLOWED_BOTS" in admit_github(GitHubSender("renovate[bot]", "MEMBER", True), rules).refused
    listed = rules.model_copy(update={"github_allowed_bots": frozenset({"renovate"})})
    assert admit_github(GitHubSender("Renovate[bot]", "NONE", True), listed).refused is None


def test_slack_takes_the_installed_workspace_unless_teams_are_listed(rules: Settings) -> None:
    assert admit_slack(SlackSender("U1", "T1", installed_team="T1"), rules).refused is None
    assert "`T2`" in admit_slack(SlackSender("U1", "T2", installed_team="T1"), rules).refused
    listed = rules.model_copy(update={"slack_allowed_teams": frozenset({"T2"})})
    assert "`T1`" in admit_slack(SlackSender("U1", "T1", installed_team="T1"), listed).refused


def test_telegram_refuses_everyone_without_a_rule(rules: Settings) -> None:
    assert "`42`" in admit_telegram(TelegramSender(42, None), rules).refused
    assert unset_rule("telegram", rules) is not None
    listed = rules.model_copy(update={"telegram_allowed_users": frozenset({"42"})})
    assert admit_telegram(TelegramSender(42, "ada"), listed).refused is None
    assert unset_rule("telegram", listed) is None


@pytest.mark.parametrize(("guilds", "roles", "users", "sender", "allowed"), [
    ({"1"}, set(), set(), DiscordSender("9", "1", frozenset()), True),
    ({"1"}, set(), set(), DiscordSender("9", "2", frozenset()), False),  # another server
    ({"1"}, {"5"}, set(), DiscordSender("9", "1", frozenset({"5"})), True),
    ({"1"}, {"5"}, set(), DiscordSender("9", "1", frozenset({"6"})), False),  # no allowed role
    ({"1"}, set(), {"8"}, DiscordSender("9", "1", frozenset()), False),  # users narrow the server too
    ({"1"}, {"5"}, {"9"}, DiscordSender("9", "1", frozenset()), True),  # a listed user needs no role
    (set(), set(), {"9"}, DiscordSender("9", None, frozenset()), True),  # a direct message from a listed user
    ({"1"}, set(), set(), DiscordSender("9", None, frozenset()), False),  # a direct message needs a user rule
    (set(), set(), set(), DiscordSender("9", "1", frozenset()), False),  # no rule: nobody
])
def test_discord_servers_roles_and_users(rules: Settings, guilds: set[str], roles: set[str], users: set[str],
                                          sender: DiscordSender, allowed: bool) -> None:
    settings = rules.model_copy(update={"discord_allowed_guilds": frozenset(guilds),
                                        "discord_allowed_roles": frozenset(roles),
                                        "discord_allowed_users": frozenset(users)})
    assert (admit_discord(sender, settings).refused is None) is allowed


def test_admin_users_narrow_only_the_commands_that_destroy_or_restore(rules: Settings) -> None:
    narrowed = rules.model_copy(update={"telegram_allowed_users": frozenset({"1", "2"}),
                                        "telegram_admin_users": frozenset({"1"})})
    assert admit_telegram(TelegramSender(1, None), narrowed).admin_refused is None
    assert "TELEGRAM_ADMIN_USERS" in admit_telegram(TelegramSender(2, None), narrowed).admin_refused
    assert admit_telegram(TelegramSender(2, None), rules).admin_refused is None  # unset: no narrowing
    for text, destructive in [("/clone x", True), ("/worktree remove a --force", True), ("/worktree remove a", False),
                              ("/worktree cleanup merged", True), ("/worktree cleanup merged --dry-run", False),
                              ("/worktree restore a", True), ("/worktree list", False), ("/status", False)]:
        command = parse_command(text)
        assert command is not None and destroys_or_restores(command) is destructive, text


@pytest.mark.parametrize(("target", "is_path", "reason"), [
    ("https://github.com/o/r", False, None),
    ("git@github.com:o/r.git", False, None),
    ("https://GitHub.com:443/o/r", False, None),
    ("https://github.com@evil.example/o/r", False, "`evil.example` is not one"),
    ("ssh://git@gitlab.example/o/r", False, "`gitlab.example` is not one"),
    ("file:///srv/repos/r", False, "`file://` URL"),
    ("/srv/repos/r", True, None),
    ("/srv/repos", True, None),
    ("/srv/reposx/r", True, "only takes local paths under"),
    ("/srv/repos/../secret", True, "with `..`"),
    ("./r", True, "relative path"),
    ("~/r", True, "relative path"),
    ("/etc", True, "only takes local paths under"),
])
def test_clone_from_chat(target: str, is_path: bool, reason: str | None) -> None:
    refusal = clone_refusal(target, ClonePolicy(hosts=["github.com"], roots=["/srv/repos"]), is_path)
    assert refusal is None if reason is None else reason in refusal


def test_clone_defaults_to_the_github_host_and_no_local_path(rules: Settings) -> None:
    assert clone_policy(rules) == ClonePolicy(hosts=["github.com"], roots=[])
    assert github_host("https://ghe.example.com/api/v3") == "ghe.example.com"
    assert url_host("git@Example.com:o/r") == "example.com"
    assert "not set" in clone_refusal("/srv/repos/r", clone_policy(rules), is_path=True)


@pytest.mark.parametrize(("variable", "value"), [
    ("GITHUB_ALLOWED_ASSOCIATIONS", "OWNER,BOSS"), ("TELEGRAM_ALLOWED_USERS", "ada"),
    ("DISCORD_ALLOWED_GUILDS", "my-server"), ("CLONE_ALLOWED_ROOTS", "relative/folder"),
    ("CLONE_ALLOWED_HOSTS", "https://github.com"), ("SLACK_ALLOWED_TEAMS", "T1;T2"),
])
def test_invalid_rules_fail_at_start_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigurationError, match=variable):
        load_settings()


def test_lists_are_comma_separated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_ALLOWED_ASSOCIATIONS", "owner, member")
    monkeypatch.setenv("TELEGRAM_ALLOWED_USERS", "1,2")
    monkeypatch.setenv("CLONE_ALLOWED_HOSTS", "none")
    settings = load_settings()
    assert settings.github_allowed_associations == {"OWNER", "MEMBER"}
    assert settings.telegram_allowed_users == {"1", "2"}
    assert clone_policy(settings).hosts == []
