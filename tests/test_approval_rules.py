"""Claude Code's rule syntax as AGENT_APPROVALS and `[approvals]` read it, and what each call gets
(isolator/approval_rules.py): pure functions."""

from __future__ import annotations

import json

import pytest

from activities.runs.agents.claude_permissions import PermissionRelay
from isolator.approval_rules import RuleError, conversation_rule, parse_rule, parse_rules, verdict
from isolator.contracts.approvals import AllowedCalls, ToolCall, parse_press_value, press_value

WORKTREE = "/w/project/thread-1"
RULES = parse_rules("ask: Bash(git push:*), Bash(npm run *), Bash(make), Write(migrations/**), Edit(*.sql), "
                    "WebFetch(domain:example.com), mcp__github__*; deny: Bash(rm -rf:*), WebSearch")


def bash(command: str) -> ToolCall:
    return ToolCall("Bash", {"command": command, "description": "the model's words"})


def wrote(path: str, tool: str = "Write") -> ToolCall:
    return ToolCall(tool, {"file_path": f"{WORKTREE}/{path}", "content": "x"})


@pytest.mark.parametrize(("call", "expected"), [
    (bash("git push origin HEAD"), "ask"),
    (bash("git push"), "ask"),
    (bash("git pushy"), "allow"),  # a prefix is a whole word
    (bash("cd sub && git push"), "ask"),  # a compound command: one of its parts
    (bash("git status | tee x; git push --force"), "ask"),
    (bash("npm run build"), "ask"),
    (bash("npm test"), "allow"),
    (bash("make"), "ask"),
    (bash("make install"), "allow"),  # an exact command, exactly
    (bash("rm -rf /"), "deny"),
    (bash("echo && rm -rf build"), "deny"),
    (wrote("migrations/001/up.sql"), "ask"),
    (wrote("src/app.py"), "allow"),
    (wrote("db/schema.sql", "Edit"), "ask"),  # a bare name matches at any depth
    (wrote("migrations/x.sql", "MultiEdit"), "ask"),  # Write and Edit rules cover every edit tool
    (ToolCall("WebFetch", {"url": "https://example.com/a"}), "ask"),
    (ToolCall("WebFetch", {"url": "https://other.org/"}), "allow"),
    (ToolCall("WebSearch", {"query": "x"}), "deny"),
    (ToolCall("mcp__github__create_pr", {}), "ask"),
    (ToolCall("mcp__slack__post", {}), "allow"),
    (ToolCall("AskUserQuestion", {"questions": []}), "ask"),  # always a person's
    (ToolCall("ExitPlanMode", {}), "ask"),
    (ToolCall("Read", {"file_path": f"{WORKTREE}/a"}), "allow"),
])
def test_each_call_gets_the_verdict_of_the_rules(call: ToolCall, expected: str) -> None:
    assert verdict(call, RULES, AllowedCalls(), WORKTREE) == expected


def test_what_a_person_allowed_is_not_asked_again_but_deny_still_wins() -> None:
    once = AllowedCalls(calls=[bash("git push origin HEAD")])
    assert verdict(ToolCall("Bash", {"command": "git push origin HEAD", "description": "other words"}), RULES, once,
                   WORKTREE) == "allow"
    assert verdict(bash("git push origin main"), RULES, once, WORKTREE) == "ask", "only that very call"
    kept = AllowedCalls(rules=["Bash(git push:*)"])
    assert verdict(bash("git push origin main"), RULES, kept, WORKTREE) == "allow"
    assert verdict(bash("rm -rf x"), RULES, AllowedCalls(rules=["Bash(rm -rf:*)"]), WORKTREE) == "deny"
    assert verdict(ToolCall("AskUserQuestion", {"questions": [1]}), RULES, AllowedCalls(rules=["AskUserQuestion"]),
                   WORKTREE) == "ask", "a question is never answered by a rule"


# Each once made Claude Code ask (its reading matched `Bash(git push:*)`) and the relay allow (issue 46).
SPELLINGS = ["git  push", "true & git push", "command git push", "(git push)", "{ git push; }", "X=1 git push",
             "env X=1 git push", "exec git push", "time git push", "\\git push", "'git' push", "echo $(git push)"]
PIGGYBACK = "git push origin main; rm -rf /tmp/q; echo RAN"


@pytest.mark.parametrize("line", [*SPELLINGS, "command touch x", "true & touch y"])
def test_every_spelling_of_an_asked_command_is_asked(line: str) -> None:
    rules = parse_rules("ask: Bash(git push:*), Bash(touch:*)")
    assert verdict(bash(line), rules, AllowedCalls(), WORKTREE) == "ask"


def test_a_person_s_rule_allows_a_line_only_when_it_allows_every_command_of_it() -> None:
    asks = parse_rules("ask: Bash(git push:*), Bash(rm -rf:*), Bash(make)")
    exact = AllowedCalls(rules=[conversation_rule(bash("git push origin main"), WORKTREE)])
    assert verdict(bash("git push origin main"), asks, exact, WORKTREE) == "allow"
    assert verdict(bash("git  push 'origin' main"), asks, exact, WORKTREE) == "allow", "the same words"
    assert verdict(bash(PIGGYBACK), asks, exact, WORKTREE) == "ask", "rm -rf rides along"
    assert verdict(bash(PIGGYBACK), asks, exact, WORKTREE, asked_by_rule=True) == "ask"
    assert verdict(bash("git push origin main && echo done"), asks, exact, WORKTREE) == "ask", "echo too"
    prefixes = AllowedCalls(rules=["Bash(git push:*)", "Bash(echo:*)"])
    assert verdict(bash("git push origin main && echo done"), asks, prefixes, WORKTREE) == "allow"
    assert verdict(bash("echo $(git push) $(make)"), asks, prefixes, WORKTREE) == "ask", "make is nobody's yes"
    assert verdict(bash("$tool push"), asks, AllowedCalls(rules=["Bash(*)"]), WORKTREE) == "ask", \
        "a name made when it runs is allowed by no rule"
    unreadable = "git push 'origin"
    assert verdict(bash(unreadable), asks, AllowedCalls(rules=["Bash(git push:*)"]), WORKTREE) == "ask"
    assert verdict(bash(unreadable), asks, AllowedCalls(rules=[f"Bash({unreadable})"]), WORKTREE) == "allow", \
        "the very line a person allowed"


def test_what_claude_code_asked_because_of_a_rule_only_a_person_allows() -> None:
    for line in ("sh -c 'git push'", "echo hi"):  # what our reading finds no rule for
        assert verdict(bash(line), RULES, AllowedCalls(), WORKTREE, asked_by_rule=True) == "ask"
        assert verdict(bash(line), RULES, AllowedCalls(calls=[bash(line)]), WORKTREE, asked_by_rule=True) == "allow"
    assert verdict(bash("echo hi"), RULES, AllowedCalls(), WORKTREE) == "allow", "its mode asked: the rules answer"


def test_a_line_nobody_can_read_or_a_name_made_when_it_runs_is_asked_and_denied_commands_inside_are_denied() -> None:
    for line in ("$tool push", "echo 'open", "g?t push"):
        assert verdict(bash(line), RULES, AllowedCalls(), WORKTREE) == "ask", line
        assert verdict(bash(line), parse_rules("deny: Bash(rm -rf:*)"), AllowedCalls(), WORKTREE) == "allow", \
            "no asking rule: nothing to ask about"
    for line in ("echo $(rm -rf /)", "X=1 command rm  -rf /", "(rm -rf /) &"):
        assert verdict(bash(line), RULES, AllowedCalls(rules=["Bash"]), WORKTREE) == "deny", line


def relay_answer(request: dict) -> dict:
    """The relay's answer to one `can_use_tool` request, as it writes it to Claude Code."""
    relay = PermissionRelay(RULES, AllowedCalls(), WORKTREE)
    relay.on_event({"type": "control_request", "request_id": "r1", "request": {"subtype": "can_use_tool", **request}})
    return json.loads(relay._lines.get_nowait())["response"]["response"]


@pytest.mark.parametrize(("reason", "expected"), [
    ({"decision_reason_type": "rule", "decision_reason_rule_source": "flagSettings"}, "deny"),
    ({"decision_reason_type": "other", "matched_ask_rule": {"tool_name": "Bash", "rule_content": "git push:*"}},
     "deny"),
    ({"decision_reason_type": "subcommandResults"}, "deny"),
    ({"decision_reason_type": "subcommandResults", "permission_suggestions": [
        {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "curl x"}], "behavior": "allow"}]},
     "allow"),  # its permission mode asked
    ({"decision_reason_type": "other", "decision_reason": "This command requires approval"}, "allow"),
])
def test_the_relay_asks_a_person_whenever_claude_code_asked_because_of_a_rule(reason: dict, expected: str) -> None:
    answer = relay_answer({"tool_name": "Bash", "input": {"command": "sh -c 'git push'"}, "tool_use_id": "t1",
                           **reason})
    assert answer["behavior"] == expected
    assert answer.get("interrupt", False) is (expected == "deny"), "a person is asked: the turn ends there"


def test_write_path_rules_reach_claude_code_as_edit_rules_too() -> None:
    """Claude Code (2.1.332) checks Write calls against `Edit(path)` rules and passes over `Write(path)` ones."""
    rules = parse_rules("ask: Write(reports/**), Edit(*.sql), Write, Bash(git push:*); deny: Write(secrets/**)")
    assert json.loads(PermissionRelay(rules, AllowedCalls(), WORKTREE).settings()) == {"permissions": {
        "ask": ["Write(reports/**)", "Edit(*.sql)", "Write", "Bash(git push:*)", "Edit(reports/**)"],
        "deny": ["Write(secrets/**)", "Edit(secrets/**)"]}}


def test_allow_for_this_conversation_keeps_the_suggested_rule_or_the_exact_call() -> None:
    suggested = ToolCall("Bash", {"command": "touch a"}, suggested_rule="Bash(touch:*)")
    assert conversation_rule(suggested, WORKTREE) == "Bash(touch:*)"
    assert conversation_rule(bash("git push origin HEAD"), WORKTREE) == "Bash(git push origin HEAD)"
    assert conversation_rule(wrote("migrations/1.sql"), WORKTREE) == "Write(migrations/1.sql)"
    assert conversation_rule(ToolCall("WebFetch", {"url": "https://Example.com/x"}), WORKTREE) == \
        "WebFetch(domain:example.com)"
    assert conversation_rule(ToolCall("mcp__github__x", {}), WORKTREE) == "mcp__github__x"


def test_a_repository_adds_rules_and_never_takes_the_operators_away() -> None:
    operator, repository = parse_rules("ask: Bash(git push:*)"), parse_rules("ask: Write(db/**); deny: WebFetch")
    both = operator.bounded_by(repository)
    assert [str(rule) for rule in both.ask] == ["Bash(git push:*)", "Write(db/**)"]
    assert [str(rule) for rule in both.deny] == ["WebFetch"]
    assert parse_rules("").active is False and both.active


@pytest.mark.parametrize(("setting", "says"), [
    ("Bash(git push:*)", "does not begin with `ask:` or `deny:`"),
    ("allow: Bash", "does not begin with `ask:` or `deny:`"),
    ("ask: Bash()", "nothing between its parentheses"),
    ("ask: (x)", "is not a rule"),
])
def test_a_setting_that_cannot_be_read_says_what_to_write(setting: str, says: str) -> None:
    with pytest.raises(RuleError, match=r".*") as raised:
        parse_rules(setting)
    assert says in str(raised.value)


def test_a_rule_with_commas_inside_its_parentheses_stays_one_rule() -> None:
    assert [str(rule) for rule in parse_rules("ask: Bash(echo a, b), WebFetch").ask] == ["Bash(echo a, b)", "WebFetch"]
    assert parse_rule(" mcp__x ").tool == "mcp__x"


def test_a_button_s_value_is_read_back_only_as_it_was_written() -> None:
    value = press_value("K7P2QXAB", "option", 2)
    assert len(value.encode()) <= 64, "Telegram's callback data"
    assert parse_press_value(value) is not None and parse_press_value(value).option == 2
    for tampered in ("isolator-approval:k7p2qxab:once", "isolator-approval:K7P2QXAB:drop", "other:K7P2QXAB:once",
                     "isolator-approval:K7P2QXAB:option:²", "isolator-approval:K7\x00P2:once",
                     "isolator-approval:K7P2QXAB:once:1:2"):
        assert parse_press_value(tampered) is None, tampered
