"""CI results and review feedback on the fake GitHub API: what a PR's loop reads back.

Shapes follow GitHub's REST documentation (docs.github.com/rest: checks, actions, pulls/reviews,
pulls/comments) as PyGithub's CheckSuite, CheckRun, CheckRunAnnotation, WorkflowRun, WorkflowJob,
PullRequestReview and PullRequestComment read them:

- `GET /repos/{o}/{r}/check-suites/{id}` and `.../check-suites/{id}/check-runs`, `GET .../check-runs/{id}`
  and `.../check-runs/{id}/annotations`, `GET .../commits/{sha}/check-suites`; the commit's
  `check-runs` list (FakeGitHub's) includes the runs added here.
- `GET .../actions/runs` (`head_sha`, `branch`, `event`, `status` filters), `GET .../actions/runs/{id}`,
  `.../actions/runs/{id}/jobs`, `GET .../actions/jobs/{id}`; `GET .../actions/jobs/{id}/logs` answers
  302 to a signed plain-text URL on the same server (`/_logs/{job}?sig=...`, no token needed), as
  GitHub's redirect to its log storage does. Logs are GitHub's format: each line after an ISO
  timestamp, a step between `##[group]Run {step}` and `##[endgroup]`, failures as `##[error]...`.
- `GET .../pulls/{n}/reviews` and `.../reviews/{id}`, `.../reviews/{id}/comments`, `GET .../pulls/{n}/comments`,
  `GET .../pulls/comments/{id}`, `POST .../pulls/{n}/comments/{id}/replies` (recorded in `replies`).

`set_mergeable` sets the `mergeable` and `mergeable_state` of FakeGitHub's `GET .../pulls/{n}`. Failures
are injected with `FakeGitHub.fail(route, status)` under the route names of `calls`.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Sequence
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response

from tests.fakes.github_api import _DOCS, _REPO, SITE, _not_found, _user
from tests.fakes.recording_server import Recorded, RecordingServer

if TYPE_CHECKING:
    from tests.fakes.github_api import FakeGitHub

ACTIONS_APP = {"id": 15368, "slug": "github-actions", "node_id": "MDM6QXBwMTUzNjg=", "name": "GitHub Actions",
               "owner": _user("github", "Organization"), "html_url": f"{SITE}/apps/github-actions",
               "external_url": "https://help.github.com/en/actions", "description": "Automate your workflow",
               "created_at": "2018-07-30T09:30:17Z", "updated_at": "2019-12-10T19:04:12Z", "permissions": {},
               "events": []}
WHEN = "2024-01-01T00:00:00Z"
_ROUTES = {  # route name -> (method, path pattern), for `calls` and `FakeGitHub.fail`
    "check_suite": ("GET", _REPO + r"/check-suites/(?P<id>\d+)"),
    "suite_check_runs": ("GET", _REPO + r"/check-suites/(?P<id>\d+)/check-runs"),
    "commit_check_suites": ("GET", _REPO + r"/commits/(?P<sha>[0-9a-f]{40})/check-suites"),
    "check_run": ("GET", _REPO + r"/check-runs/(?P<id>\d+)"),
    "annotations": ("GET", _REPO + r"/check-runs/(?P<id>\d+)/annotations"),
    "workflow_runs": ("GET", _REPO + r"/actions/runs"),
    "workflow_run": ("GET", _REPO + r"/actions/runs/(?P<id>\d+)"),
    "jobs": ("GET", _REPO + r"/actions/runs/(?P<id>\d+)/jobs"),
    "job": ("GET", _REPO + r"/actions/jobs/(?P<id>\d+)"),
    "job_logs": ("GET", _REPO + r"/actions/jobs/(?P<id>\d+)/logs"),
    "log_download": ("GET", r"/_logs/(?P<id>\d+)"),
    "reviews": ("GET", _REPO + r"/pulls/(?P<number>\d+)/reviews"),
    "review": ("GET", _REPO + r"/pulls/(?P<number>\d+)/reviews/(?P<id>\d+)"),
    "review_comments": ("GET", _REPO + r"/pulls/(?P<number>\d+)/reviews/(?P<id>\d+)/comments"),
    "pull_comments": ("GET", _REPO + r"/pulls/(?P<number>\d+)/comments"),
    "pull_comment": ("GET", _REPO + r"/pulls/comments/(?P<id>\d+)"),
    "reply": ("POST", _REPO + r"/pulls/(?P<number>\d+)/comments/(?P<id>\d+)/replies"),
}


@dataclass
class Annotation:
    """A check run annotation (REST `check-runs/{id}/annotations`); level `notice`, `warning` or `failure`."""
    path: str
    start_line: int
    message: str
    end_line: int | None = None  # None: the start line
    annotation_level: str = "failure"
    title: str = ""


@dataclass
class Check:
    """A check run of a suite: `conclusion` None is a run still in progress."""
    name: str
    conclusion: str | None
    title: str = ""
    summary: str = ""
    text: str = ""
    annotations: list[Annotation] = field(default_factory=list)


@dataclass
class Step:
    """A job's step; `output` is what it printed (its log lines)."""
    name: str
    conclusion: str | None = "success"  # None: still running
    output: str = ""


@dataclass
class Job:
    """A workflow job; its log is built from the steps unless `log` is given (GitHub's format, timestamps added)."""
    name: str
    conclusion: str | None
    steps: list[Step] = field(default_factory=list)
    log: str | None = None
    annotations: list[Annotation] = field(default_factory=list)  # of the job's check run


class SuiteIds(NamedTuple):
    suite_id: int
    check_run_ids: list[int]


class RunIds(NamedTuple):
    run_id: int
    check_suite_id: int
    job_ids: list[int]


class ReviewIds(NamedTuple):
    review_id: int
    comment_ids: list[int]


@dataclass
class Reply:
    """A reply posted to a review comment through `POST .../pulls/{n}/comments/{id}/replies`."""
    repository: str
    number: int
    in_reply_to: int
    body: str


class GitHubChecks:
    """Check suites and runs, workflow runs and jobs with logs, reviews and their comments, for one FakeGitHub."""

    def __init__(self, github: FakeGitHub) -> None:
        self.github = github
        self.replies: list[Reply] = []  # replies posted to review comments, in order
        self.suites: dict[int, dict[str, Any]] = {}
        self.check_runs: dict[int, dict[str, Any]] = {}
        self.annotations: dict[int, list[dict[str, Any]]] = {}  # by check run
        self.workflow_runs: dict[int, dict[str, Any]] = {}
        self.jobs: dict[int, dict[str, Any]] = {}
        self.logs: dict[int, str] = {}  # by job
        self.reviews: dict[int, dict[str, Any]] = {}
        self.review_comments: dict[int, dict[str, Any]] = {}
        self._signatures: set[str] = set()
        handlers: dict[str, Callable[[Recorded], tuple[int, Any]]] = {
            "check_suite": self._get_suite, "suite_check_runs": self._suite_runs, "check_run": self._get_run,
            "commit_check_suites": self._commit_suites, "annotations": self._annotations,
            "workflow_runs": self._list_workflow_runs, "workflow_run": self._get_workflow_run, "jobs": self._list_jobs,
            "job": self._get_job, "reviews": self._list_reviews, "review": self._get_review,
            "review_comments": self._list_review_comments, "pull_comments": self._list_pull_comments,
            "pull_comment": self._get_pull_comment, "reply": self._reply,
        }
        for name, handler in handlers.items():
            method, pattern = _ROUTES[name]
            github.server.route(method, pattern, handler)
        _serve_ahead_of_json(github.server, {"job_logs": self._job_logs, "log_download": self._log_download})

    def calls(self, route: str) -> int:
        """How many requests reached `route` (a key of `_ROUTES`, e.g. "job_logs", "reply"), refused ones included."""
        method, pattern = _ROUTES[route]
        return len(self.github.server.received(method, pattern))

    # --- configuring ----------------------------------------------------------------------------

    def add_check_suite(self, repo: str, head_sha: str, conclusion: str | None, check_runs: Sequence[Check] = (),
                        head_branch: str = "main", pull_numbers: tuple[int, ...] = (),
                        app: dict[str, Any] = ACTIONS_APP) -> SuiteIds:
        """A check suite of `app` on the commit, with its check runs (their output and annotations)."""
        url = self._repo_url(repo)
        suite_id = next(self.github._ids)
        self.suites[suite_id] = {
            "id": suite_id, "node_id": f"CS_{suite_id}", "head_branch": head_branch, "head_sha": head_sha,
            "status": "completed" if conclusion else "in_progress", "conclusion": conclusion,
            "url": f"{url}/check-suites/{suite_id}", "before": "0" * 40, "after": head_sha,
            "pull_requests": [self._pull_reference(repo, number) for number in pull_numbers], "app": app,
            "repository": self.github._repository(repo), "created_at": WHEN, "updated_at": WHEN,
            "latest_check_runs_count": len(check_runs), "check_runs_url": f"{url}/check-suites/{suite_id}/check-runs",
            "head_commit": {"id": head_sha, "tree_id": "0" * 40, "message": "Work on the PR", "timestamp": WHEN,
                            "author": {"name": "Octocat", "email": "octocat@github.com"},
                            "committer": {"name": "GitHub", "email": "noreply@github.com"}},
            "rerequestable": True, "runs_rerequestable": True,
        }
        return SuiteIds(suite_id, [self._add_check_run(repo, suite_id, check) for check in check_runs])

    def add_workflow_run(self, repo: str, head_sha: str, head_branch: str, conclusion: str | None,
                         jobs: Sequence[Job] = (), name: str = "CI", event: str = "pull_request",
                         pull_numbers: tuple[int, ...] = ()) -> RunIds:
        """A GitHub Actions run: its check suite (one check run per job, as Actions makes them) and its jobs."""
        url, html = self._repo_url(repo), f"{SITE}/{repo}"
        checks = [Check(job.name, job.conclusion, annotations=job.annotations) for job in jobs]
        suite_id, check_run_ids = self.add_check_suite(repo, head_sha, conclusion, checks, head_branch, pull_numbers)
        run_id = next(self.github._ids)
        run_url = f"{url}/actions/runs/{run_id}"
        self.workflow_runs[run_id] = {
            "id": run_id, "name": name, "node_id": f"WFR_{run_id}", "head_branch": head_branch, "head_sha": head_sha,
            "path": ".github/workflows/ci.yml", "display_title": "Work on the PR",
            "run_number": len(self.workflow_runs) + 1,
            "event": event, "status": "completed" if conclusion else "in_progress", "conclusion": conclusion,
            "workflow_id": 2823525, "check_suite_id": suite_id, "check_suite_node_id": f"CS_{suite_id}",
            "url": run_url, "html_url": f"{html}/actions/runs/{run_id}",
            "pull_requests": self.suites[suite_id]["pull_requests"],
            "created_at": WHEN, "updated_at": WHEN, "run_attempt": 1, "run_started_at": WHEN,
            "actor": _user("octocat"), "triggering_actor": _user("octocat"), "jobs_url": f"{run_url}/jobs",
            "logs_url": f"{run_url}/logs", "check_suite_url": f"{url}/check-suites/{suite_id}",
            "artifacts_url": f"{run_url}/artifacts", "cancel_url": f"{run_url}/cancel", "rerun_url": f"{run_url}/rerun",
            "previous_attempt_url": None, "workflow_url": f"{url}/actions/workflows/2823525",
            "head_commit": self.suites[suite_id]["head_commit"], "repository": self.github._repository(repo),
            "head_repository": self.github._repository(repo),
        }
        job_ids = []
        for job, check_run_id in zip(jobs, check_run_ids):
            job_id = next(self.github._ids)
            steps = [{"name": step.name, "status": "completed" if step.conclusion else "in_progress",
                      "conclusion": step.conclusion, "number": number, "started_at": WHEN,
                      "completed_at": WHEN if step.conclusion else None}
                     for number, step in enumerate(job.steps, start=1)]
            self.jobs[job_id] = {
                "id": job_id, "run_id": run_id, "run_url": run_url, "run_attempt": 1, "node_id": f"J_{job_id}",
                "head_sha": head_sha, "head_branch": head_branch, "url": f"{url}/actions/jobs/{job_id}",
                "html_url": f"{html}/actions/runs/{run_id}/job/{job_id}", "status": "completed" if job.conclusion
                else "in_progress", "conclusion": job.conclusion, "created_at": WHEN, "started_at": WHEN,
                "completed_at": WHEN if job.conclusion else None, "name": job.name, "steps": steps,
                "check_run_url": f"{url}/check-runs/{check_run_id}", "labels": ["ubuntu-latest"], "runner_id": 1,
                "runner_name": "GitHub Actions 1", "runner_group_id": 1, "runner_group_name": "GitHub Actions",
                "workflow_name": name,
            }
            self.check_runs[check_run_id].update(html_url=self.jobs[job_id]["html_url"],
                                                 details_url=self.jobs[job_id]["html_url"])
            self.logs[job_id] = job.log if job.log is not None else job_log(job.steps)
            job_ids.append(job_id)
        return RunIds(run_id, suite_id, job_ids)

    def add_review(self, repo: str, pr_number: int, state: str = "CHANGES_REQUESTED", body: str = "",
                   comments: Sequence[tuple[str, int, int | None, str, str]] = (),
                   user: str = "octocat") -> ReviewIds:
        """A submitted review (REST state: APPROVED, CHANGES_REQUESTED, COMMENTED) and its inline comments,
        each (path, line, start_line or None, diff_hunk, body), on the right side of the diff."""
        pull_url, html = f"{self._repo_url(repo)}/pulls/{pr_number}", f"{SITE}/{repo}/pull/{pr_number}"
        review_id = next(self.github._ids)
        self.reviews[review_id] = {
            "id": review_id, "node_id": f"PRR_{review_id}", "user": _person(user), "body": body, "state": state,
            "html_url": f"{html}#pullrequestreview-{review_id}", "pull_request_url": pull_url,
            "_links": {"html": {"href": f"{html}#pullrequestreview-{review_id}"}, "pull_request": {"href": pull_url}},
            "submitted_at": WHEN, "commit_id": self._head_sha(repo, pr_number), "author_association": "MEMBER",
        }
        ids = [self._add_comment(repo, pr_number, review_id, user, *comment)["id"] for comment in comments]
        return ReviewIds(review_id, ids)

    def add_thread_reply(self, repo: str, pr_number: int, in_reply_to: int, body: str,
                         user: str = "octocat") -> ReviewIds:
        """A reviewer's answer in an existing thread: a COMMENTED review whose one comment replies to
        `in_reply_to` (threaded under the thread's first comment, as GitHub does)."""
        original = self.review_comments[in_reply_to]
        review_id = self.add_review(repo, pr_number, "COMMENTED", "", user=user).review_id
        comment = self._add_comment(repo, pr_number, review_id, user, original["path"], original["line"],
                                    original["start_line"], original["diff_hunk"], body,
                                    in_reply_to=original.get("in_reply_to_id", in_reply_to))
        return ReviewIds(review_id, [comment["id"]])

    def set_mergeable(self, repo: str, number: int, mergeable: bool | None, state: str) -> None:
        """The PR's `mergeable` (None: GitHub has not computed it yet) and `mergeable_state`
        (`clean`, `dirty`, `blocked`, `behind`, `unstable`, `unknown`...)."""
        self.github._pulls[(repo.lower(), number)].update(mergeable=mergeable, mergeable_state=state)

    def replies_to(self, comment_id: int) -> list[Reply]:
        return [reply for reply in self.replies if reply.in_reply_to == comment_id]

    # --- building -------------------------------------------------------------------------------

    def _repo_url(self, repo: str) -> str:
        return (self.github._repository(repo) or self.github.add_repository(repo))["url"]

    def _head_sha(self, repo: str, number: int) -> str:
        pull = self.github._pulls.get((repo.lower(), number))
        return pull["head"]["sha"] if pull else "0" * 40

    def _pull_reference(self, repo: str, number: int) -> dict[str, Any]:
        """A PR as check suites and workflow runs list it: url, id, number, head and base (ref, sha, repo)."""
        pull = self.github._pulls.get((repo.lower(), number)) or {"id": number, "head": {"ref": "", "sha": "0" * 40},
                                                                  "base": {"ref": "main", "sha": "0" * 40}}
        repository = self.github._repository(repo) or {}
        short = {"id": repository.get("id"), "url": repository.get("url"), "name": repository.get("name")}
        return {"url": f"{self._repo_url(repo)}/pulls/{number}", "id": pull["id"], "number": number,
                **{part: {"ref": pull[part]["ref"], "sha": pull[part]["sha"], "repo": short}
                   for part in ("head", "base")}}

    def _add_check_run(self, repo: str, suite_id: int, check: Check) -> int:
        url, run_id = self._repo_url(repo), next(self.github._ids)
        suite = self.suites[suite_id]
        self.check_runs[run_id] = run = {
            "id": run_id, "node_id": f"CR_{run_id}", "head_sha": suite["head_sha"], "external_id": "",
            "url": f"{url}/check-runs/{run_id}", "html_url": f"{SITE}/{repo}/runs/{run_id}",
            "details_url": f"{SITE}/{repo}/runs/{run_id}", "status": "completed" if check.conclusion else "in_progress",
            "conclusion": check.conclusion, "started_at": WHEN, "completed_at": WHEN if check.conclusion else None,
            "output": {"title": check.title or None, "summary": check.summary or None, "text": check.text or None,
                       "annotations_count": len(check.annotations),
                       "annotations_url": f"{url}/check-runs/{run_id}/annotations"},
            "name": check.name, "check_suite": {"id": suite_id}, "app": suite["app"],
            "pull_requests": suite["pull_requests"],
        }
        self.annotations[run_id] = [{
            "path": note.path, "blob_href": f"{SITE}/{repo}/blob/{suite['head_sha']}/{note.path}",
            "start_line": note.start_line, "end_line": note.end_line or note.start_line, "start_column": None,
            "end_column": None, "annotation_level": note.annotation_level, "title": note.title or None,
            "message": note.message, "raw_details": None} for note in check.annotations]
        self.github._check_runs.setdefault(suite["head_sha"], []).append(run)
        return run_id

    def _add_comment(self, repo: str, number: int, review_id: int, user: str, path: str, line: int,
                     start_line: int | None, diff_hunk: str, body: str,
                     in_reply_to: int | None = None) -> dict[str, Any]:
        """A review comment as REST `pulls/comments` answers it (`in_reply_to_id` only on replies)."""
        comment_id, sha = next(self.github._ids), self._head_sha(repo, number)
        pull_url, url = f"{self._repo_url(repo)}/pulls/{number}", f"{self._repo_url(repo)}/pulls/comments/{comment_id}"
        html = f"{SITE}/{repo}/pull/{number}#discussion_r{comment_id}"
        comment = {
            "url": url, "pull_request_review_id": review_id,
            "id": comment_id, "node_id": f"PRRC_{comment_id}", "diff_hunk": diff_hunk, "path": path, "position": 1,
            "original_position": 1, "commit_id": sha, "original_commit_id": sha, "user": _person(user), "body": body,
            "created_at": WHEN, "updated_at": WHEN, "html_url": html, "pull_request_url": pull_url,
            "author_association": "MEMBER",
            "_links": {"self": {"href": url}, "html": {"href": html}, "pull_request": {"href": pull_url}},
            "start_line": start_line, "original_start_line": start_line, "start_side": "RIGHT" if start_line else None,
            "line": line, "original_line": line, "side": "RIGHT", "subject_type": "line",
        }
        if in_reply_to is not None:
            comment["in_reply_to_id"] = in_reply_to
        self.review_comments[comment_id] = comment
        return comment

    # --- answering --------------------------------------------------------------------------------

    def _found(self, request: Recorded, route: str, table: dict[int, dict[str, Any]]) -> tuple[int, Any]:
        refused = self.github._refusal(request, route)
        item = table.get(int(request.params["id"]))
        return refused or ((200, item) if item and _in_repository(request, item["url"]) else _not_found())

    def _get_suite(self, request: Recorded) -> tuple[int, Any]:
        return self._found(request, "check_suite", self.suites)

    def _get_run(self, request: Recorded) -> tuple[int, Any]:
        return self._found(request, "check_run", self.check_runs)

    def _get_workflow_run(self, request: Recorded) -> tuple[int, Any]:
        return self._found(request, "workflow_run", self.workflow_runs)

    def _get_job(self, request: Recorded) -> tuple[int, Any]:
        return self._found(request, "job", self.jobs)

    def _get_pull_comment(self, request: Recorded) -> tuple[int, Any]:
        return self._found(request, "pull_comment", self.review_comments)

    def _suite_runs(self, request: Recorded) -> tuple[int, Any]:
        status, suite = self._found(request, "suite_check_runs", self.suites)
        runs = [run for run in self.check_runs.values() if status == 200 and run["check_suite"]["id"] == suite["id"]]
        return (200, {"total_count": len(runs), "check_runs": runs}) if status == 200 else (status, suite)

    def _commit_suites(self, request: Recorded) -> tuple[int, Any]:
        suites = [suite for suite in self.suites.values()
                  if suite["head_sha"] == request.params["sha"] and _in_repository(request, suite["url"])]
        return self.github._refusal(request, "commit_check_suites") or (200, {"total_count": len(suites),
                                                                                "check_suites": suites})

    def _annotations(self, request: Recorded) -> tuple[int, Any]:
        status, run = self._found(request, "annotations", self.check_runs)
        return (200, self.annotations[run["id"]]) if status == 200 else (status, run)

    def _list_workflow_runs(self, request: Recorded) -> tuple[int, Any]:
        asked = {key: values[0] for key, values in request.query.items()}
        runs = [run for run in self.workflow_runs.values() if _in_repository(request, run["url"])
                and asked.get("head_sha", run["head_sha"]) == run["head_sha"]
                and asked.get("branch", run["head_branch"]) == run["head_branch"]
                and asked.get("event", run["event"]) == run["event"]
                and asked.get("status") in (None, run["status"], run["conclusion"])]
        runs.reverse()  # newest first, as GitHub lists them
        listed = {"total_count": len(runs), "workflow_runs": runs}
        return self.github._refusal(request, "workflow_runs") or (200, listed)

    def _list_jobs(self, request: Recorded) -> tuple[int, Any]:
        status, run = self._found(request, "jobs", self.workflow_runs)
        jobs = [job for job in self.jobs.values() if status == 200 and job["run_id"] == run["id"]]
        return (200, {"total_count": len(jobs), "jobs": jobs}) if status == 200 else (status, run)

    def _job_logs(self, request: Recorded) -> Response:
        status, job = self._found(request, "job_logs", self.jobs)
        if status != 200:
            return _json_error(status, job["message"])
        if "authorization" not in request.headers:  # GitHub serves no logs anonymously, public repositories too
            return _json_error(403, "Must have admin rights to Repository.")
        signature = secrets.token_urlsafe(16)
        self._signatures.add(signature)
        return RedirectResponse(f"{self.github.api_url}/_logs/{job['id']}?sig={signature}", status_code=302)

    def _log_download(self, request: Recorded) -> Response:
        if (request.query.get("sig") or [""])[0] not in self._signatures:
            return PlainTextResponse("AuthenticationFailed: the signature does not match", status_code=403)
        return PlainTextResponse(self.logs[int(request.params["id"])])

    def _reviews_of(self, request: Recorded) -> list[dict[str, Any]]:
        return [review for review in self.reviews.values() if _of_pull(request, review)]

    def _list_reviews(self, request: Recorded) -> tuple[int, Any]:
        return self.github._refusal(request, "reviews") or (200, self._reviews_of(request))

    def _get_review(self, request: Recorded) -> tuple[int, Any]:
        found = [review for review in self._reviews_of(request) if review["id"] == int(request.params["id"])]
        return self.github._refusal(request, "review") or ((200, found[0]) if found else _not_found())

    def _list_review_comments(self, request: Recorded) -> tuple[int, Any]:
        refused = self.github._refusal(request, "review_comments")
        if refused or not any(review["id"] == int(request.params["id"]) for review in self._reviews_of(request)):
            return refused or _not_found()
        return 200, [comment for comment in self.review_comments.values()
                     if comment["pull_request_review_id"] == int(request.params["id"])]

    def _list_pull_comments(self, request: Recorded) -> tuple[int, Any]:
        return self.github._refusal(request, "pull_comments") or (200, [
            comment for comment in self.review_comments.values() if _of_pull(request, comment)])

    def _reply(self, request: Recorded) -> tuple[int, Any]:
        refused = self.github._refusal(request, "reply", anonymous="Requires authentication")
        if refused:
            return refused
        repo, number = f"{request.params['owner']}/{request.params['name']}", int(request.params["number"])
        original = self.review_comments.get(int(request.params["id"]))
        if original is None or not _of_pull(request, original):
            return _not_found()
        body = request.json().get("body")
        if not isinstance(body, str) or not body:
            missing = {"resource": "PullRequestReviewComment", "code": "missing_field", "field": "body"}
            return 422, {"message": "Validation Failed", "errors": [missing], "documentation_url": _DOCS}
        thread = original.get("in_reply_to_id", original["id"])  # GitHub threads a reply to a reply under the first
        review_id = self.add_review(repo, number, "COMMENTED", "", user="isolator[bot]").review_id  # GitHub's too
        reply = self._add_comment(repo, number, review_id, "isolator[bot]", original["path"], original["line"],
                                  original["start_line"], original["diff_hunk"], body, in_reply_to=thread)
        self.replies.append(Reply(repo, number, thread, body))
        return 201, reply


def job_log(steps: Sequence[Step]) -> str:
    """A job's log as GitHub Actions writes it: each step in a `##[group]Run ...` group, then its output;
    a failed step ends with `##[error]Process completed with exit code 1.`."""
    lines = []
    for second, step in enumerate(steps):
        stamp = f"2024-01-01T00:00:{second:02d}.0000000Z"
        lines += [f"{stamp} ##[group]Run {step.name}", f"{stamp} {step.name}", f"{stamp} ##[endgroup]"]
        lines += [f"{stamp} {line}" for line in step.output.splitlines()]
        if step.conclusion == "failure":
            lines.append(f"{stamp} ##[error]Process completed with exit code 1.")
    return "\n".join(lines) + "\n"


def _in_repository(request: Recorded, url: str) -> bool:
    return f"/repos/{request.params['owner']}/{request.params['name']}/".lower() in url.lower()


def _person(login: str) -> dict[str, Any]:
    return _user(login, "Bot" if login.endswith("[bot]") else "User")


def _of_pull(request: Recorded, item: dict[str, Any]) -> bool:
    """Whether a review or review comment belongs to the PR the request names."""
    wanted = f"/repos/{request.params['owner']}/{request.params['name']}/pulls/{request.params['number']}"
    return item["pull_request_url"].lower().endswith(wanted.lower())


def _json_error(status: int, message: str) -> Response:
    return JSONResponse({"message": message, "documentation_url": _DOCS, "status": str(status)}, status_code=status)


def _serve_ahead_of_json(server: RecordingServer, handlers: dict[str, Callable[[Recorded], Response]]) -> None:
    """RecordingServer answers JSON only; these routes answer a redirect or plain text, so they are served
    before its handler (and recorded like every request). Call before the server starts."""
    routes = [(*_ROUTES[name], handler) for name, handler in handlers.items()]
    answer_json = server._handle

    async def handle(request: Request) -> Response:
        for method, pattern, handler in routes:
            match = re.fullmatch(pattern, request.url.path)
            if request.method == method and match:
                recorded = Recorded(request.method, request.url.path, parse_qs(request.url.query),
                                    {key.lower(): value for key, value in request.headers.items()},
                                    await request.body(), match.groupdict())
                server.requests.append(recorded)
                return handler(recorded)
        return await answer_json(request)

    server._handle = handle  # type: ignore[method-assign]
