"""The commands a shell line runs, as the approval relay reads them (isolator/shell_commands.py): every
spelling that once talked an `ask` rule out of what Claude Code asked (issue 46), and what the reader
cannot know, said as such. Pure functions."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from isolator.shell_commands import Command, Unreadable, commands


def run(line: str) -> list[str]:
    """The commands of `line`, each as its words joined by one space; `?` before one whose name is unknown."""
    return [("" if command.known else "?") + " ".join(command.words) for command in commands(line)]


@pytest.mark.parametrize("line", [
    "git  push",
    "true & git push",
    "command git push",
    "(git push)",
    "{ git push; }",
    "X=1 git push",
    "env X=1 git push",
    "exec git push",
    "time git push",
    "\\git push",
    "'git' push",
    '"git" push',
    "echo $(git push)",
    "echo `git push`",
    'echo "$(git push)"',
    "echo ${X:-$(git push)}",
    "cat <(git push)",
    "X=$(git push) true",
    "true\ngit push",
    "false || git push",
    "true | git push",
    "! git push",
    "if true; then git push; fi",
    "for x in a; do git push; done",
    "f() { git push; }; f",
    "function f { git push; }",
    "case x in x) git push;; esac",
    "git >log push 2>&1",
    "git \\\n  push",
    "time -p nice -n 5 nohup timeout --signal KILL 10 exec -a x command -p git push",
    "env -i -u HOME --chdir=/ -- X=1 git push",
    "echo $((1 << $(git push)))",
    "((n = 1 + $(git push)))",
    "echo `echo \\`git push\\``",
])
def test_every_spelling_of_git_push_is_read_as_git_push(line: str) -> None:
    assert "git push" in run(line), run(line)


def test_a_line_of_several_commands_gives_each_of_them() -> None:
    assert run("git push origin main; rm -rf /tmp/q; echo RAN") == ["git push origin main", "rm -rf /tmp/q", "echo RAN"]
    assert run("a && b || c | d & e\nf") == ["a", "b", "c", "d", "e", "f"]
    assert run("echo $(git push)") == ["git push", "echo $(git push)"], "a substitution's command ends first"


def test_words_keep_what_quotes_hold_and_lose_redirections() -> None:
    assert commands("git commit -m 'a b; rm -rf /'") == [Command(("git", "commit", "-m", "a b; rm -rf /"))]
    assert commands('echo "a \\"b\\" \\$HOME" x\\ y') == [Command(("echo", 'a "b" $HOME', "x y"))]
    assert run("sort <in >out 2>>err 3<>rw &>all") == ["sort"]
    assert run("echo a#b # git push") == ["echo a#b"], "a comment runs nothing"


def test_here_documents_run_only_their_substitutions() -> None:
    assert run("cat <<EOF\ngit push $(rm -rf x) don't\nEOF\nls") == ["cat", "rm -rf x", "ls"]
    assert run("cat <<'EOF'\n$(rm -rf x)\nEOF\nls") == ["cat", "ls"], "a quoted delimiter: the body is text"
    assert run("cat <<-EOF\n\t$(rm -rf x)\n\tEOF\nls") == ["cat", "rm -rf x", "ls"]
    assert run("echo $((1<<2))\ngit push") == ["echo $((1<<2))", "git push"], "arithmetic's << is no here-document"


@pytest.mark.parametrize("line", ["$tool push", "g?t push", "gi[t] push", "{git,push}", "$(echo git) push",
                                  "`echo git` push", "$'git' push", "${GIT} push", "env $CMD"])
def test_a_command_whose_name_is_made_when_it_runs_is_unknown(line: str) -> None:
    assert any(name.startswith("?") for name in run(line)), run(line)


def test_names_the_shell_reads_as_they_are_are_known() -> None:
    assert run("[ -f x ] && [[ -n $y ]]") == ["[ -f x ]", "[[ -n $y ]]"]
    assert run("{ echo a; }") == ["echo a"]


@pytest.mark.parametrize("line", ["echo 'open", 'echo "open', "echo $(git push", "echo `git push", "echo ${X",
                                  "env -S 'git push'", "env -iS'git push'", "env --split-string='git push'",
                                  "echo >", "echo $'open"])
def test_a_line_it_cannot_read_says_so(line: str) -> None:
    with pytest.raises(Unreadable):
        commands(line)


def test_programs_that_run_a_string_of_their_own_are_named_by_that_program() -> None:
    """No prefix rule catches what these run (docs/approvals.md): `deny: Bash`, or the sandbox, does."""
    assert run("sh -c 'git push'") == ["sh -c git push"]
    assert run("eval 'git push'") == ["eval git push"]
    assert run("git -c alias.p=push p") == ["git -c alias.p=push p"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(list("ab $()`'\"\\{}[]*?;&|<>\n#=-!2") + ["$(", "((", "))", "<<", "EOF", "${", "$((",
                                                                          "<(", "git", "env", "-S"]), max_size=30))
def test_any_line_is_read_or_said_unreadable(pieces: list[str]) -> None:
    try:
        commands("".join(pieces))
    except Unreadable:
        pass
