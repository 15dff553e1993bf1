"""The commands a shell command line runs, as an approval rule must see them (docs/approvals.md).

    commands("true & X=1 command 'git'  push; echo $(rm -rf /tmp/q)")
    -> [Command(("true",)), Command(("git", "push")), Command(("rm", "-rf", "/tmp/q")),
        Command(("echo", "$(rm -rf /tmp/q)"))]

Every simple command, wherever it stands: after `;`, `&`, `&&`, `||`, `|` or a newline, in `( … )`, `{ …; }`,
`$(…)`, backticks, `<(…)`, `${…}` or an unquoted here-document; its words without quotes, backslashes,
redirections and what only starts it (`VAR=value`, `if`, `!`, `{`, and the programs that run the command
after them: `command`, `exec`, `time`, `env`, … with their options). Pure: nothing is run or expanded.

What it cannot know it says, so that the relay asks: an unclosed quote or substitution, or `env -S`, raises
Unreadable; a name made when it runs (`$tool push`, `g?t push`, `{git,push}`) has `known=False`. A program
that runs a string of its own (`sh -c '…'`, `eval`, `xargs`) is one command, named by that program.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


class Unreadable(ValueError):
    """A command line this module cannot read as the shell would."""


@dataclass(frozen=True)
class Command:
    words: tuple[str, ...]  # its name first
    known: bool = True  # False: its name is made when it runs (an expansion, a glob, a substitution)


# The shell's own words before a command, which run nothing themselves.
KEYWORDS = frozenset("if then elif else fi do done while until esac ! { } coproc".split())
# Programs that run the command after them: their options that take a value, and the operands before it.
WRAPPERS: dict[str, tuple[tuple[str, ...], int]] = {
    "command": ((), 0), "builtin": ((), 0), "exec": (("-a",), 0), "nohup": ((), 0), "nice": (("-n", "--adjustment"), 0),
    "time": (("-f", "--format", "-o", "--output"), 0), "env": (("-u", "--unset", "-C", "--chdir"), 0),
    "timeout": (("-s", "--signal", "-k", "--kill-after"), 1)}
_ASSIGNMENT = re.compile(r"[A-Za-z_]\w*(?:\[[^\]]*\])?\+?=")
_ENDS_WORD = frozenset(" \t\n;&|()<>")
_ANSI_C = re.compile(r"\$'(?:[^'\\]|\\.)*'", re.DOTALL)
_REDIRECTION = re.compile(r"&>>?|<<<|<<-?|<>|<&|>&|>>|>\||<|>")
# Unquoted, these make a word into other words when it runs: a glob, a brace expansion.
_EXPANDS = re.compile(r"[*?]|\[.+\]|\{.*(?:,|\.\.).*\}")


def commands(line: str) -> list[Command]:
    """Each command `line` runs, in the order its reading ends (a substitution's before the command holding it)."""
    reader = _Reader(line)
    reader.commands()
    return reader.found


@dataclass
class _Word:
    start: int
    end: int = 0
    chars: list[str] = field(default_factory=list)
    unquoted: list[str] = field(default_factory=list)  # the characters no quote or backslash protected
    expands: bool = False  # holds a `$…` or a substitution
    quoted: bool = False

    @property
    def text(self) -> str:
        return "".join(self.chars)

    @property
    def literal(self) -> bool:
        return not self.expands and _EXPANDS.search("".join(self.unquoted)) is None


class _Reader:
    def __init__(self, line: str) -> None:
        self.line = line
        self.at = 0
        self.found: list[Command] = []
        self.heredocs: list[tuple[str, bool, bool]] = []  # (delimiter, quoted, tabs stripped), read after the line

    def peek(self, ahead: int = 0) -> str:
        return self.line[self.at + ahead:self.at + ahead + 1]

    def commands(self, nested: bool = False) -> None:
        """The commands to the end of the line, or to the `)` that closes a substitution (`nested`)."""
        words: list[_Word] = []
        depth = 0  # subshells opened since
        while True:
            char = self.peek()
            if char == "" and nested:
                raise Unreadable("a `)` is missing")
            if char == "" or (char == ")" and depth == 0 and nested):
                self.at += 1
                self._finish(words)
                return
            if char in " \t":
                self.at += 1
            elif char == "\\" and self.peek(1) == "\n":
                self.at += 2
            elif char == "#":  # at a word's start (a word reads its own): a comment
                while self.peek() not in ("", "\n"):
                    self.at += 1
            elif char == "(" and not words and self.peek(1) == "(" and self._arithmetic(2):
                pass  # `(( … ))`
            elif char in "<>" and self.peek(1) == "(":
                words.append(self._word())  # a process substitution is a word of its command
            elif char in "<>" or (char == "&" and self.peek(1) == ">"):
                self._redirect(words)
            elif char in _ENDS_WORD:  # `;` `&` `|` `(` `)` and newline: the command ends
                depth += {"(": 1, ")": -1 if depth else 0}.get(char, 0)
                self.at += 1
                self._finish(words)
                words = []
                if char == "\n":
                    self._heredocs()
            else:
                words.append(self._word())
                if len(words) == 2 and words[0].text == "function":  # `function f { …; }`: the body is commands
                    self._finish(words)
                    words = []

    def _finish(self, words: list[_Word]) -> None:
        index = 0
        while index < len(words):
            word = words[index]
            if word.literal and word.text in WRAPPERS:
                index = _after_options(words, index + 1, word.text)
            elif (word.literal and word.text in KEYWORDS) or _ASSIGNMENT.match(self.line[word.start:word.end]):
                index += 1
            else:
                break
        if index < len(words):
            self.found.append(Command(tuple(word.text for word in words[index:]), words[index].literal))

    def _word(self) -> _Word:
        word = _Word(self.at)
        if self.peek() in "<>":  # `<(…)`, `>(…)`
            self.at += 2
            self.commands(nested=True)
            word.chars.append(self.line[word.start:self.at])
            word.expands = True
        while (char := self.peek()) and char not in _ENDS_WORD:
            if char == "\\":
                word.quoted = True
                if self.peek(1) != "\n":
                    word.chars.append(self.peek(1))
                self.at += 2
            elif char == "'":
                end = self.line.find("'", self.at + 1)
                if end < 0:
                    raise Unreadable("a `'` is not closed")
                word.chars.append(self.line[self.at + 1:end])
                word.quoted, self.at = True, end + 1
            elif char == '"':
                word.quoted = True
                self.at += 1
                self._double_quoted(word, '"')
            elif char in "$`":
                self._expansion(word)
            else:
                word.chars.append(char)
                word.unquoted.append(char)
                self.at += 1
        word.end = min(self.at, len(self.line))
        return word

    def _double_quoted(self, word: _Word, closer: str) -> None:
        """The inside of `"…"` (`closer` `"`), or of a here-document (`closer` empty: to the end)."""
        while (char := self.peek()) != closer or not closer:
            if char == "":
                if closer:
                    raise Unreadable('a `"` is not closed')
                return
            if char == "\\" and self.peek(1) in ('$', '`', '"', '\\', '\n'):
                word.chars.append(self.peek(1).strip("\n"))
                self.at += 2
            elif char in "$`":
                self._expansion(word)
            else:
                word.chars.append(char)
                self.at += 1
        self.at += 1

    def _expansion(self, word: _Word) -> None:
        """`$…` or backticks: the word holds what it will be when it runs, and any command inside runs too."""
        start = self.at
        after = self.peek(1)
        if self.peek() == "`":
            self._backticks()
        elif after == "(" and self.peek(2) == "(" and self._arithmetic(3):
            pass
        elif after == "(":
            self.at += 2
            self.commands(nested=True)
        elif after == "{":  # `${…}`, which may hold substitutions: `${X:-$(cmd)}`
            self.at += 1
            self._through("{", "}")
        elif after == "'":  # $'…': its escapes are decoded when it runs
            if (quoted := _ANSI_C.match(self.line, self.at)) is None:
                raise Unreadable("a `$'` is not closed")
            self.at = quoted.end()
        elif after == '"':
            self.at += 2
            self._double_quoted(word, '"')
            return
        elif after and (after.isalnum() or after in "_@*#?$!-"):
            self.at += 1  # `$NAME`: its name is read as the word's own characters
        else:  # a `$` alone is itself
            word.chars.append("$")
            self.at += 1
            return
        word.chars.append(self.line[start:self.at])
        word.expands = True

    def _backticks(self) -> None:
        inner, self.at = [], self.at + 1
        while (char := self.peek()) != "`":
            if char == "":
                raise Unreadable("a backtick is not closed")
            if char == "\\" and self.peek(1) in ("`", "\\", "$"):
                char = self.peek(1)
                self.at += 1
            inner.append(char)
            self.at += 1
        self.at += 1
        self.found.extend(commands("".join(inner)))

    def _through(self, opening: str, closing: str) -> None:
        """From an `opening` to the `closing` that matches it (`{…}` of `${…}`), reading the expansions inside."""
        scratch, depth = _Word(self.at), 0
        while True:
            char = self.peek()
            if char == "":
                raise Unreadable(f"a `{closing}` is missing")
            if char in "$`":
                self._expansion(scratch)
                continue
            depth += (char == opening) - (char == closing)
            self.at += 2 if char == "\\" else 1
            if depth == 0:
                return

    def _arithmetic(self, opening: int) -> bool:
        """`$(( … ))` or `(( … ))`, where only substitutions run. False, with nothing read, when it is not
        closed by `))` (`((cd x) )` is two subshells to the shell too)."""
        start, found = self.at, len(self.found)
        self.at += opening - 1
        try:
            self._through("(", ")")
            if self.peek() != ")":
                raise Unreadable("`((` is closed by one `)`")
        except Unreadable:
            self.at = start
            del self.found[found:]
            return False
        self.at += 1
        return True

    def _redirect(self, words: list[_Word]) -> None:
        """`> file`, `2>&1`, `<<EOF`: neither the operator nor its file is a word of the command."""
        if words and words[-1].end == self.at and re.fullmatch(r"\d+|\{\w+\}", self.line[words[-1].start:self.at]):
            words.pop()  # the `2` of `2>`
        operator = _REDIRECTION.match(self.line, self.at)
        assert operator is not None  # the line is at a `<`, `>` or `&>`
        self.at = operator.end()
        while self.peek() in (" ", "\t"):
            self.at += 1
        if self.peek() == "" or self.peek() in _ENDS_WORD - {"<", ">"}:
            raise Unreadable(f"`{operator.group()}` names no file")
        target = self._word()
        if operator.group() in ("<<", "<<-"):
            self.heredocs.append((target.text, target.quoted, operator.group() == "<<-"))

    def _heredocs(self) -> None:
        """The here-documents of the line just ended: skipped to their delimiter's line, their substitutions
        read unless the delimiter was quoted."""
        pending, self.heredocs = self.heredocs, []
        for delimiter, quoted, tabs in pending:
            lines = self.line[self.at:].split("\n")
            ends = next((index for index, text in enumerate(lines)
                         if (text.lstrip("\t") if tabs else text) == delimiter), len(lines))
            self.at += sum(len(text) + 1 for text in lines[:ends + 1])
            if not quoted:
                body = _Reader("\n".join(lines[:ends]))
                body._double_quoted(_Word(0), "")
                self.found.extend(body.found)


def _after_options(words: list[_Word], index: int, wrapper: str) -> int:
    """The index of the command a wrapper runs: past its options and operands."""
    takes_value, operands = WRAPPERS[wrapper]
    while index < len(words) and words[index].text.startswith("-"):
        option = words[index].text
        if option == "--":
            index += 1
            break
        if wrapper == "env" and (option.startswith("--split-string") or (option[1:2] != "-" and "S" in option)):
            raise Unreadable("`env -S` splits a string into a command")
        index += 2 if option in takes_value else 1
    return index + operands
