"""The pull-request loop's texts (docs/pr-loop.md): what the agent is told of a review or a red CI, the
lines of a GitHub Actions log that matter, and the replies posted in a review's threads.

Pure: no I/O. Text from reviews, check outputs and logs is someone else's: it reaches the agent only
inside code fences longer than any run of backticks in it, so it cannot close its fence and pass for
the service's own words.
"""

from __future__ import annotations

import re

from isolator.contracts.pr_loop import CiFailure, FailedCheck, ReviewComment, ReviewFeedback, ThreadReply

# A failing step's last lines hold its error; 150 is what a person scrolls back through in the log view.
STEP_LINES = 150
BEFORE_ERROR, AFTER_ERROR = 40, 20
# A log excerpt stays small next to the rest of the prompt, whatever the job printed.
LOG_LIMIT = 12_000
# Minified bundles and progress bars print lines of megabytes; one line tells enough of itself.
LINE_LIMIT = 500
# Beyond this a CI message names the further checks without their details.
CI_MESSAGE_LIMIT = 60_000
REPLY_LIMIT = 1_000
# GitHub's diff hunk runs from the hunk's start to the commented line: a whole new file, for a comment at
# its end. Its last lines are the ones commented on (a range's lines and a few before).
HUNK_LINES, HUNK_LINES_MAX = 20, 60

_TIMESTAMP = re.compile(r"^\ufeff?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ?")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_STEP_START = "##[group]Run "
_POST_STEPS = "Post job cleanup."  # GitHub starts the post steps' output with this line, not with a group
# "Comment 2: ...", also as a list item or in bold ("- **Comment 2:** ..."), as agents write it.
_ANSWER_LINE = re.compile(r"^\W*comment\s+(\d+)\W*?[:\-–—][\s*_]*(.+?)\s*$", re.IGNORECASE)


def fenced(text: str, info: str = "") -> str:
    """`text` in a code fence it cannot close: longer than its longest run of backticks (CommonMark)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text.rstrip(chr(10))}\n{fence}"


def cut_log(log: str, failing_steps: list[str] | None = None) -> str:
    """The lines of a GitHub Actions job log that tell why it failed, at most LOG_LIMIT characters.

    Each failing step keeps its `##[group]Run ...` line and its last STEP_LINES lines. A step is told
    by its name (GitHub's step name is the group's `Run ...` text unless the workflow names it), else by
    holding an `##[error]`. A log without steps keeps the lines around its first error, else its end.
    """
    lines = [_clean(line) for line in log.splitlines()]
    lines = [line for line in lines if line != "##[endgroup]"]
    sections = _sections(lines)
    if any(header is not None for header, _ in sections):
        named = set(failing_steps or []) | {f"Run {step}" for step in failing_steps or []}
        chosen = [(header, body) for header, body in sections if header is not None and header in named]
        chosen = chosen or [(header, body) for header, body in sections
                            if any(line.startswith("##[error]") for line in body)]
        if chosen:
            budget = LOG_LIMIT // len(chosen)
            return _bounded("\n".join(_step_excerpt(body, budget) for _, body in chosen))
    errors = [index for index, line in enumerate(lines) if line.startswith("##[error]")]
    if errors:
        return _bounded(_around(lines, errors[0]))
    return _bounded("\n".join(_tail(lines, STEP_LINES, LOG_LIMIT)))


def review_message(feedback: ReviewFeedback) -> str:
    """The run's message for a review: who, its state, its body, each inline comment numbered, and how to answer."""
    state = feedback.state.replace("_", " ")
    what = f"review ({state})" if feedback.review_id is not None else "comment on the diff"
    parts = [f"@{feedback.author} left a {what} on PR #{feedback.number} of {feedback.repository}."]
    if feedback.body.strip():
        parts.append("The review says:\n" + fenced(feedback.body))
    for number, comment in enumerate(feedback.comments, start=1):
        if comment.line is None:
            where = "a line no longer in the diff"
        elif comment.start_line is not None and comment.start_line != comment.line:
            where = f"lines {comment.start_line}-{comment.line}"
        else:
            where = f"line {comment.line}"
        parts.append(f"Comment {number} by @{comment.author} on {comment.path}, {where}:\n"
                     + (fenced(_hunk_end(comment), "diff") + "\n" if comment.diff_hunk else "") + fenced(comment.body))
    if feedback.comments:
        lines = "\n".join(f"Comment {number}: <what was done, or why not>"
                          for number in range(1, len(feedback.comments) + 1))
        parts.append("Address these comments: change the code where the reviewer is right, and where you do not "
                     "change it, say why. End your answer with one line per comment, exactly in this form:\n" + lines)
    else:
        parts.append("Address this review: change the code where the reviewer is right, and where you do not "
                     "change it, say why.")
    return "\n\n".join(parts)


def ci_failure_message(failure: CiFailure, attempt: int, max_attempts: int) -> str:
    """The run's message for a red CI: `CI failed on <short sha>: <checks>`, each check's details, the attempt."""
    names = ", ".join(check.name for check in failure.checks) or "its failing checks could not be read"
    parts = [f"CI failed on {failure.head_sha[:7]}: {names}"]
    size = len(parts[0])
    left_out: list[str] = []
    for check in failure.checks:
        details = _check_details(check)
        if size + len(details) > CI_MESSAGE_LIMIT:
            left_out.append(f"{check.name} ({check.conclusion})")
            continue
        parts.append(details)
        size += len(details)
    if left_out:
        parts.append("Also failed (details left out for length): " + ", ".join(left_out))
    parts.append(f"Fix what fails, and say in your answer what you changed; this is attempt {attempt} of "
                 f"{max_attempts}.")
    return "\n\n".join(parts)


def thread_replies(answer: str, feedback: ReviewFeedback, pushed: str | None) -> list[ThreadReply]:
    """One reply per inline comment: the agent's `Comment N: ...` line, else a general word on the run."""
    said: dict[int, str] = {}
    for line in answer.splitlines():
        match = _ANSWER_LINE.match(line)
        if match:
            said[int(match.group(1))] = match.group(2)  # the last line for N wins: the answer's closing list
    first_line = next((line.strip() for line in answer.splitlines() if line.strip()), "")
    if pushed:
        general = f"Addressed in {pushed} — see the PR's comment."
    else:
        general = f"Not changed in this run: {first_line}" if first_line else "Not changed in this run."
    return [ThreadReply(comment.id, _short(said.get(number) or general, REPLY_LIMIT))
            for number, comment in enumerate(feedback.comments, start=1)]


def _check_details(check: FailedCheck) -> str:
    lines = [f'Check "{check.name}": {check.conclusion}']
    output = "\n\n".join(part for part in (check.title, check.summary, check.text) if part.strip())
    if output:
        lines.append("Its output:\n" + fenced(output))
    if check.annotations:
        lines.append("Its annotations:\n" + fenced("\n".join(check.annotations)))
    if check.log_excerpt:
        lines.append("Its log, the lines that matter:\n" + fenced(check.log_excerpt))
    return "\n".join(lines)


def _hunk_end(comment: ReviewComment) -> str:
    lines = comment.diff_hunk.splitlines()
    header, rest = (lines[0], lines[1:]) if lines and lines[0].startswith("@@") else ("", lines)
    span = comment.line - comment.start_line + 1 if comment.line and comment.start_line else 1
    keep = min(max(HUNK_LINES, span + 5), HUNK_LINES_MAX)
    if len(rest) <= keep:
        return comment.diff_hunk
    return "\n".join([*([header] if header else []), f"… ({len(rest) - keep} lines of the hunk cut)", *rest[-keep:]])


def _clean(line: str) -> str:
    line = _ANSI.sub("", _TIMESTAMP.sub("", line))
    return line if len(line) <= LINE_LIMIT else line[:LINE_LIMIT] + " …"


def _sections(lines: list[str]) -> list[tuple[str | None, list[str]]]:
    """The log split at each step's start: (its `Run ...` header, or None before the first and for post steps)."""
    sections: list[tuple[str | None, list[str]]] = [(None, [])]
    for line in lines:
        if line.startswith(_STEP_START):
            sections.append((line.removeprefix("##[group]"), []))
        elif line == _POST_STEPS:
            sections.append((None, []))
        sections[-1][1].append(line)
    return sections


def _step_excerpt(body: list[str], budget: int) -> str:
    """A step's header line, then its last lines within the budget."""
    header, rest = body[0], body[1:]
    kept = _tail(rest, STEP_LINES, budget - len(header) - 40)
    cut = len(rest) - len(kept)
    return "\n".join([header, *([f"… ({cut} lines cut)"] if cut else []), *kept])


def _around(lines: list[str], error: int) -> str:
    after = lines[error:error + AFTER_ERROR + 1]
    while len(after) > 1 and sum(len(line) + 1 for line in after) > LOG_LIMIT // 2:
        after.pop()
    spent = sum(len(line) + 1 for line in after)
    before = _tail(lines[max(0, error - BEFORE_ERROR):error], BEFORE_ERROR, LOG_LIMIT - spent - 40)
    cut = error - len(before)
    return "\n".join([*([f"… ({cut} lines cut)"] if cut else []), *before, *after])


def _tail(lines: list[str], count: int, budget: int) -> list[str]:
    """The last `count` lines at most, fewer when they pass `budget` characters."""
    kept: list[str] = []
    for line in reversed(lines[-count:] if count else []):
        budget -= len(line) + 1
        if budget < 0:
            break
        kept.append(line)
    return kept[::-1]


def _bounded(text: str) -> str:
    # The excerpts keep within LOG_LIMIT already; this is the guarantee, whatever a log holds.
    return text if len(text) <= LOG_LIMIT else "…" + text[-(LOG_LIMIT - 1):]


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"
