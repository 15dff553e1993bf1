"""CI results and review feedback as GitHub delivers them: `check_suite` and `workflow_run` `completed`,
`pull_request_review` `submitted`, `pull_request_review_comment` `created`.

The payloads follow octokit/webhooks' examples (payload-examples/api.github.com/<event>/<action>.payload.json),
trimmed to what a reader of the event needs. Send them with `tests.platforms.github.deliver`, which signs
them as GitHub does. URLs of the REST API start at `api_url` (https://api.github.com by default; a test
can point them at the fake GitHub API); ids are the test's, so they can match what FakeGitHub.checks serves.
"""

from __future__ import annotations

import zlib
from typing import Any

from tests.platforms.github import REPO, repository

API = "https://api.github.com"
SITE = "https://github.com"
WHEN = "2024-01-01T00:00:00Z"


def user(login: str) -> dict[str, Any]:
    """A webhook's user object; logins ending in `[bot]` are Bots."""
    return {"login": login, "id": zlib.crc32(login.encode()) % 10_000_000, "node_id": f"U_{login}",
            "type": "Bot" if login.endswith("[bot]") else "User", "site_admin": False,
            "html_url": f"{SITE}/{login.removesuffix('[bot]')}"}


def repository_of(full_name: str, api_url: str = API) -> dict[str, Any]:
    """The delivery's `repository`: tests.platforms.github's for its REPO, the same shape for others."""
    owner, name = full_name.split("/")
    base = repository() if full_name == REPO else {
        **repository(), "id": zlib.crc32(full_name.encode()) % 10_000_000, "node_id": f"R_{full_name}", "name": name,
        "full_name": full_name, "owner": {"login": owner, "id": 5, "type": "User"}, "html_url": f"{SITE}/{full_name}",
        "clone_url": f"{SITE}/{full_name}.git"}
    return {**base, "url": f"{api_url}/repos/{full_name}"}


def pull_reference(full_name: str, number: int, head_ref: str, head_sha: str, api_url: str = API) -> dict[str, Any]:
    """A PR as `check_suite.pull_requests` and `workflow_run.pull_requests` list it."""
    short = {"id": repository_of(full_name)["id"], "url": f"{api_url}/repos/{full_name}",
             "name": full_name.split("/")[1]}
    return {"url": f"{api_url}/repos/{full_name}/pulls/{number}", "id": 279_000_000 + number, "number": number,
            "head": {"ref": head_ref, "sha": head_sha, "repo": short},
            "base": {"ref": "main", "sha": "0" * 40, "repo": short}}


def head_commit(sha: str) -> dict[str, Any]:
    return {"id": sha, "tree_id": "0" * 40, "message": "Work on the PR", "timestamp": WHEN,
            "author": {"name": "Octocat", "email": "octocat@github.com"},
            "committer": {"name": "GitHub", "email": "noreply@github.com"}}


def check_suite_completed(
    repo_full_name: str, suite_id: int, head_sha: str, head_branch: str, conclusion: str,
    pull_numbers: tuple[int, ...] = (), sender_login: str = "github-actions[bot]", app_slug: str = "github-actions",
    check_runs_count: int = 1, api_url: str = API,
) -> dict[str, Any]:
    """`check_suite` `completed` (example: check_suite/completed.payload.json); `conclusion` is success,
    failure, neutral, cancelled, timed_out, action_required or stale."""
    url = f"{api_url}/repos/{repo_full_name}/check-suites/{suite_id}"
    suite = {
        "id": suite_id, "node_id": f"CS_{suite_id}", "head_branch": head_branch, "head_sha": head_sha,
        "status": "completed", "conclusion": conclusion, "url": url, "before": "0" * 40, "after": head_sha,
        "pull_requests": [pull_reference(repo_full_name, number, head_branch, head_sha, api_url)
                          for number in pull_numbers],
        "app": {"id": 15368, "slug": app_slug, "node_id": "MDM6QXBwMTUzNjg=", "name": "GitHub Actions",
                "owner": user("github"), "html_url": f"{SITE}/apps/{app_slug}", "permissions": {}, "events": []},
        "created_at": WHEN, "updated_at": WHEN, "latest_check_runs_count": check_runs_count,
        "check_runs_url": f"{url}/check-runs", "head_commit": head_commit(head_sha),
    }
    return {"action": "completed", "check_suite": suite, "repository": repository_of(repo_full_name, api_url),
            "sender": user(sender_login)}


def workflow_run_completed(
    repo_full_name: str, run_id: int, head_sha: str, head_branch: str, conclusion: str,
    pull_numbers: tuple[int, ...] = (), check_suite_id: int = 0, name: str = "CI", event: str = "pull_request",
    sender_login: str = "octocat", api_url: str = API,
) -> dict[str, Any]:
    """`workflow_run` `completed` (example: workflow_run/completed.with-pull-requests.payload.json);
    `check_suite_id` 0 is run_id + 1."""
    repo_url, html = f"{api_url}/repos/{repo_full_name}", f"{SITE}/{repo_full_name}"
    run_url, suite_id = f"{repo_url}/actions/runs/{run_id}", check_suite_id or run_id + 1
    workflow = {"id": 2823525, "node_id": "W_2823525", "name": name, "path": ".github/workflows/ci.yml",
                "state": "active", "created_at": WHEN, "updated_at": WHEN,
                "url": f"{repo_url}/actions/workflows/2823525",
                "html_url": f"{html}/blob/main/.github/workflows/ci.yml",
                "badge_url": f"{html}/workflows/{name}/badge.svg"}
    run = {
        "id": run_id, "name": name, "node_id": f"WFR_{run_id}", "head_branch": head_branch, "head_sha": head_sha,
        "path": ".github/workflows/ci.yml", "display_title": "Work on the PR", "run_number": 1, "event": event,
        "status": "completed", "conclusion": conclusion, "workflow_id": workflow["id"], "check_suite_id": suite_id,
        "check_suite_node_id": f"CS_{suite_id}", "url": run_url, "html_url": f"{html}/actions/runs/{run_id}",
        "pull_requests": [pull_reference(repo_full_name, number, head_branch, head_sha, api_url)
                          for number in pull_numbers],
        "created_at": WHEN, "updated_at": WHEN, "actor": user(sender_login), "triggering_actor": user(sender_login),
        "run_attempt": 1, "run_started_at": WHEN, "jobs_url": f"{run_url}/jobs", "logs_url": f"{run_url}/logs",
        "check_suite_url": f"{repo_url}/check-suites/{suite_id}", "artifacts_url": f"{run_url}/artifacts",
        "cancel_url": f"{run_url}/cancel", "rerun_url": f"{run_url}/rerun", "previous_attempt_url": None,
        "workflow_url": workflow["url"], "head_commit": head_commit(head_sha),
        "repository": repository_of(repo_full_name, api_url), "head_repository": repository_of(repo_full_name, api_url),
    }
    return {"action": "completed", "workflow": workflow, "workflow_run": run,
            "repository": repository_of(repo_full_name, api_url), "sender": user(sender_login)}


def pull_request(repo_full_name: str, number: int, head_ref: str, head_sha: str, api_url: str = API) -> dict[str, Any]:
    """The open PR as review deliveries carry it (`pull_request`)."""
    repo_url, html = f"{api_url}/repos/{repo_full_name}", f"{SITE}/{repo_full_name}/pull/{number}"
    owner = repo_full_name.split("/")[0]
    target = repository_of(repo_full_name, api_url)
    return {
        "url": f"{repo_url}/pulls/{number}", "id": 279_000_000 + number, "node_id": f"PR_{number}", "html_url": html,
        "issue_url": f"{repo_url}/issues/{number}", "number": number, "state": "open", "locked": False,
        "title": f"PR {number}", "body": "", "user": user("octocat"), "created_at": WHEN, "updated_at": WHEN,
        "closed_at": None, "merged_at": None, "merge_commit_sha": None, "draft": False, "author_association": "MEMBER",
        "assignee": None, "assignees": [], "requested_reviewers": [], "requested_teams": [], "labels": [],
        "milestone": None, "active_lock_reason": None, "auto_merge": None,
        "diff_url": f"{html}.diff", "patch_url": f"{html}.patch",
        "review_comment_url": f"{repo_url}/pulls/comments{{/number}}",
        "_links": {"self": {"href": f"{repo_url}/pulls/{number}"}, "html": {"href": html}},
        "commits_url": f"{repo_url}/pulls/{number}/commits",
        "review_comments_url": f"{repo_url}/pulls/{number}/comments",
        "comments_url": f"{repo_url}/issues/{number}/comments", "statuses_url": f"{repo_url}/statuses/{head_sha}",
        "head": {"label": f"{owner}:{head_ref}", "ref": head_ref, "sha": head_sha, "user": user(owner), "repo": target},
        "base": {"label": f"{owner}:main", "ref": "main", "sha": "0" * 40, "user": user(owner), "repo": target},
    }


def pull_request_review_submitted(
    repo_full_name: str, pr_number: int, review_id: int, state: str, body: str | None, user_login: str,
    head_sha: str, head_ref: str, association: str = "MEMBER", api_url: str = API,
) -> dict[str, Any]:
    """`pull_request_review` `submitted` (example: pull_request_review/submitted.payload.json); the
    webhook's `state` is lower-case: approved, changes_requested, commented."""
    pull = pull_request(repo_full_name, pr_number, head_ref, head_sha, api_url)
    html = f"{pull['html_url']}#pullrequestreview-{review_id}"
    review = {"id": review_id, "node_id": f"PRR_{review_id}", "user": user(user_login), "body": body,
              "commit_id": head_sha, "submitted_at": WHEN, "state": state, "html_url": html,
              "pull_request_url": pull["url"], "author_association": association,
              "_links": {"html": {"href": html}, "pull_request": {"href": pull["url"]}}}
    return {"action": "submitted", "review": review, "pull_request": pull,
            "repository": repository_of(repo_full_name, api_url), "sender": user(user_login)}


def pull_request_review_comment_created(
    repo_full_name: str, pr_number: int, comment_id: int, review_id: int, path: str, line: int, body: str,
    user_login: str, head_sha: str, head_ref: str, diff_hunk: str = "@@ -1 +1 @@", start_line: int | None = None,
    in_reply_to_id: int | None = None, association: str = "MEMBER", api_url: str = API,
) -> dict[str, Any]:
    """`pull_request_review_comment` `created` (example: pull_request_review_comment/created.payload.json):
    an inline comment on lines `start_line`..`line` (one line when None) of the diff's right side;
    `in_reply_to_id` only on a reply in a thread."""
    pull = pull_request(repo_full_name, pr_number, head_ref, head_sha, api_url)
    url = f"{api_url}/repos/{repo_full_name}/pulls/comments/{comment_id}"
    html = f"{pull['html_url']}#discussion_r{comment_id}"
    comment = {
        "url": url, "pull_request_review_id": review_id, "id": comment_id, "node_id": f"PRRC_{comment_id}",
        "diff_hunk": diff_hunk, "path": path, "position": 1, "original_position": 1, "commit_id": head_sha,
        "original_commit_id": head_sha, "user": user(user_login), "body": body, "created_at": WHEN, "updated_at": WHEN,
        "html_url": html, "pull_request_url": pull["url"], "author_association": association,
        "_links": {"self": {"href": url}, "html": {"href": html}, "pull_request": {"href": pull["url"]}},
        "start_line": start_line, "original_start_line": start_line, "start_side": "RIGHT" if start_line else None,
        "line": line, "original_line": line, "side": "RIGHT",
        "reactions": {"url": f"{url}/reactions", "total_count": 0, "+1": 0, "-1": 0, "laugh": 0, "hooray": 0,
                      "confused": 0, "heart": 0, "rocket": 0, "eyes": 0},
    }
    if in_reply_to_id is not None:
        comment["in_reply_to_id"] = in_reply_to_id
    return {"action": "created", "comment": comment, "pull_request": pull,
            "repository": repository_of(repo_full_name, api_url), "sender": user(user_login)}
