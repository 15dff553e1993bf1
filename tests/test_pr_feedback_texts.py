"""The pull-request loop's texts: the lines of a GitHub Actions log that matter, what the agent is told of a
review and of a red CI, the replies in a review's threads, and fences that text from others cannot close."""

from __future__ import annotations

from isolator.contracts.pr_loop import CiFailure, FailedCheck, ReviewComment, ReviewFeedback, ThreadReply
from isolator.pr_feedback_texts import (
    CI_MESSAGE_LIMIT,
    LOG_LIMIT,
    REPLY_LIMIT,
    ci_failure_message,
    cut_log,
    fenced,
    review_message,
    thread_replies,
)


def stamped(lines: list[str], second: int = 0) -> list[str]:
    return [f"2024-05-02T10:{second // 60:02d}:{second % 60:02d}.{index:07d}Z {line}" for index, line in enumerate(lines)]


def actions_log(test_lines: int = 400) -> str:
    """A job log as GitHub Actions writes it: set-up, a passing checkout, a failing test step, post steps."""
    setup = ["Current runner version: '2.317.0'", "##[group]Operating System", "Ubuntu", "22.04.4", "LTS",
             "##[endgroup]", "Download action repository 'actions/checkout@v4' (SHA:692973e3)"]
    checkout = ["##[group]Run actions/checkout@v4", "with:", "  repository: octo-org/hello-world", "##[endgroup]",
                "Syncing repository: octo-org/hello-world", "\x1b[36;1mgit version 2.45.1\x1b[0m"]
    tests = ["##[group]Run pytest -q", "\x1b[36;1mpytest -q\x1b[0m", "shell: /usr/bin/bash -e {0}", "##[endgroup]"]
    tests += [f"tests/test_{index:03d}.py ...." for index in range(test_lines)]
    tests += ["FAILED tests/test_api.py::test_login - assert 401 == 200", "1 failed, 399 passed in 12.30s",
              "##[error]Process completed with exit code 1."]
    post = ["Post job cleanup.", "[command]/usr/bin/git version", "Cleaning up orphan processes"]
    return "\ufeff" + "\n".join(stamped(setup) + stamped(checkout, 5) + stamped(tests, 9) + stamped(post, 80)) + "\n"


# --- cutting logs ------------------------------------------------------------------------------------


def test_a_failing_step_keeps_its_run_line_and_its_last_150_lines() -> None:
    excerpt = cut_log(actions_log(), ["Run pytest -q"]).splitlines()

    assert excerpt[:2] == ["##[group]Run pytest -q", "… (255 lines cut)"]
    assert len(excerpt) == 152
    assert excerpt[-3:] == ["FAILED tests/test_api.py::test_login - assert 401 == 200", "1 failed, 399 passed in 12.30s",
                            "##[error]Process completed with exit code 1."]
    assert excerpt[2] == "tests/test_253.py ...."
    text = "\n".join(excerpt)
    assert "2024-05-02" not in text and "\x1b" not in text  # timestamps and colours gone
    assert "Syncing repository" not in text and "Cleaning up orphan processes" not in text


def test_a_step_the_workflow_named_is_told_by_its_error() -> None:
    # GitHub's step is named "Tests" when the workflow says `name: Tests`; its group still reads `Run pytest -q`.
    assert cut_log(actions_log(), ["Tests"]) == cut_log(actions_log(), ["Run pytest -q"]) == cut_log(actions_log())


def test_a_short_failing_step_is_kept_whole() -> None:
    excerpt = cut_log(actions_log(test_lines=3), ["Run pytest -q"]).splitlines()
    assert excerpt[:2] == ["##[group]Run pytest -q", "pytest -q"]
    assert "lines cut" not in "\n".join(excerpt) and len(excerpt) == 9


def test_a_log_without_steps_keeps_the_lines_around_its_first_error() -> None:
    lines = [f"line {index}" for index in range(500)]
    lines[200] = "##[error]npm ERR! missing script: build"
    lines[300] = "##[error]a later error"
    excerpt = cut_log("\n".join(stamped(lines))).splitlines()
    assert excerpt[0] == "… (160 lines cut)"
    assert excerpt[1:] == [f"line {index}" for index in range(160, 200)] + [lines[200]] + \
        [f"line {index}" for index in range(201, 221)]


def test_a_log_without_steps_or_errors_keeps_its_end() -> None:
    excerpt = cut_log("\n".join(f"line {index}" for index in range(1000))).splitlines()
    assert excerpt == [f"line {index}" for index in range(850, 1000)]
    assert cut_log("") == ""


def test_every_excerpt_is_bounded() -> None:
    wide = "x" * 100_000
    huge_step = actions_log().replace("tests/test_000.py ....", wide).replace("....", "." * 400)
    for log in (huge_step, "\n".join([wide] * 300), "\n".join([wide] * 100 + ["##[error]" + wide] + [wide] * 50)):
        excerpt = cut_log(log, ["Run pytest -q"])
        assert 0 < len(excerpt) <= LOG_LIMIT
    assert cut_log(huge_step, ["Run pytest -q"]).endswith("##[error]Process completed with exit code 1.")


# --- the messages ------------------------------------------------------------------------------------


def review() -> ReviewFeedback:
    hunk = "@@ -10,6 +10,8 @@ def login(user):\n     token = issue(user)\n+    log(token)"
    return ReviewFeedback("octo-org/hello-world", 12, 77, "changes_requested", "Close, but not yet.", "hubot", [
        ReviewComment(1, "api/auth.py", 12, None, hunk, "Never log the token.", "hubot"),
        ReviewComment(2, "api/auth.py", 14, 10, hunk, "Move this into ```issue```.", "hubot"),
        ReviewComment(3, "README.md", None, None, "", "Typo.", "mona"),
    ])


def test_a_review_message_numbers_each_comment_with_its_place_hunk_and_text() -> None:
    message = review_message(review())

    assert message.startswith("@hubot left a review (changes requested) on PR #12 of octo-org/hello-world.\n\n"
                              "The review says:\n```\nClose, but not yet.\n```\n\n")
    assert ("Comment 1 by @hubot on api/auth.py, line 12:\n```diff\n@@ -10,6 +10,8 @@ def login(user):\n"
            "     token = issue(user)\n+    log(token)\n```\n```\nNever log the token.\n```") in message
    assert "Comment 2 by @hubot on api/auth.py, lines 10-14:\n" in message
    assert "````\nMove this into ```issue```.\n````" in message
    assert "Comment 3 by @mona on README.md, a line no longer in the diff:\n```\nTypo.\n```" in message
    assert message.endswith("Comment 1: <what was done, or why not>\nComment 2: <what was done, or why not>\n"
                            "Comment 3: <what was done, or why not>")


def test_a_long_diff_hunk_keeps_its_header_and_the_commented_lines() -> None:
    hunk = "@@ -0,0 +1,300 @@\n" + "\n".join(f"+line {index}" for index in range(1, 301))
    alone = ReviewFeedback("o/r", 1, None, "commented", "", "hubot",
                           [ReviewComment(5, "new.py", 300, 280, hunk, "Split this.", "hubot")])
    message = review_message(alone)
    assert message.startswith("@hubot left a comment on the diff on PR #1 of o/r.\n\nComment 1")
    assert "```diff\n@@ -0,0 +1,300 @@\n… (274 lines of the hunk cut)\n+line 275\n" in message
    assert "+line 300\n```" in message and "+line 274\n" not in message


def test_a_ci_message_names_the_failing_checks_then_tells_each_and_the_attempt() -> None:
    failure = CiFailure("octo-org/hello-world", "a1b2c3d4e5" + "0" * 30, [
        FailedCheck("tests (3.12)", "failure", annotations=["tests/test_api.py:31: assert 401 == 200"],
                    log_excerpt="##[group]Run pytest -q\nprint('```')\n##[error]Process completed with exit code 1."),
        FailedCheck("mypy", "timed_out", title="2 errors", summary="Found 2 errors", text="api/app.py:3: error"),
    ])
    message = ci_failure_message(failure, 2, 3)

    assert message.startswith("CI failed on a1b2c3d: tests (3.12), mypy\n\n")
    assert ('Check "tests (3.12)": failure\nIts annotations:\n```\ntests/test_api.py:31: assert 401 == 200\n```\n'
            "Its log, the lines that matter:\n````\n##[group]Run pytest -q\nprint('```')\n") in message
    assert 'Check "mypy": timed_out\nIts output:\n```\n2 errors\n\nFound 2 errors\n\napi/app.py:3: error\n```' in message
    assert message.endswith("this is attempt 2 of 3.")


def test_a_ci_message_stays_bounded_naming_the_checks_it_leaves_out() -> None:
    checks = [FailedCheck(f"job {index}", "failure", log_excerpt="x" * LOG_LIMIT) for index in range(8)]
    message = ci_failure_message(CiFailure("o/r", "f" * 40, checks), 1, 3)
    assert len(message) < CI_MESSAGE_LIMIT + 1_000
    assert "Also failed (details left out for length): job 4 (failure), job 5 (failure), job 6 (failure), " \
           "job 7 (failure)" in message


# --- replies in the threads -------------------------------------------------------------------------


def test_the_answer_s_comment_lines_become_the_replies_of_their_threads() -> None:
    answer = ("I removed the log line and kept the block.\n\nComment 1: Removed the log line.\n"
              "- **Comment 3:** Fixed the typo.\n")
    assert thread_replies(answer, review(), pushed="a1b2c3d") == [
        ThreadReply(1, "Removed the log line."),
        ThreadReply(2, "Addressed in a1b2c3d — see the PR's comment."),
        ThreadReply(3, "Fixed the typo."),
    ]
    unpushed = thread_replies("The reviewer asked for nothing that fits here.\nMore.", review(), pushed=None)
    assert [reply.body for reply in unpushed] == ["Not changed in this run: The reviewer asked for nothing that "
                                                  "fits here."] * 3


def test_the_last_list_wins_and_replies_stay_short() -> None:
    answer = f"Plan:\nComment 2: will move it\n...\nComment 2 - Moved it into `issue`.\nComment 1: {'y' * 5000}"
    replies = thread_replies(answer, review(), pushed=None)
    assert replies[1].body == "Moved it into `issue`."
    assert len(replies[0].body) == REPLY_LIMIT and replies[0].body.endswith("…")
    assert thread_replies("", review(), None)[2].body == "Not changed in this run."


def test_fences_are_longer_than_any_run_of_backticks_inside() -> None:
    assert fenced("plain") == "```\nplain\n```"
    assert fenced("a ``` b\n") == "````\na ``` b\n````"
    assert fenced("```````` then ```", "diff") == "`````````diff\n```````` then ```\n`````````"
