"""A fake GitHub API on RecordingServer, for the real PyGithub.

REST: `GET /repos/{o}/{r}`, `GET /repos/{o}/{r}/issues/{n}`, `GET /repos/{o}/{r}/pulls/{n}`,
`POST /repos/{o}/{r}/issues/{n}/comments` (and `GET`, the list), `GET`/`PATCH
/repos/{o}/{r}/issues/comments/{id}`, `GET|POST /repos/{o}/{r}/pulls` (list with `state`/`head`/`base`, create: the head must be a branch of `origin` when one is set), the combined status
and check runs of a commit; GraphQL: `POST /graphql` for a PR's
`closingIssuesReferences`. Answers are shaped like GitHub's documented responses, errors too
(`{"message": "Not Found", ...}`; GraphQL errors with HTTP 200). Tests add repositories, issues
and PRs, and read back the comments posted.

PyGithub derives the GraphQL URL from its base URL (`{base path without /v3}/graphql`), so with
the server's root as GITHUB_API_URL it posts to `/graphql`, as with https://api.github.com.
"""

from __future__ import annotations

import itertools
import re
import subprocess
import uuid
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.fakes.recording_server import Recorded, RecordingServer

TOKEN = "ghp_isolatorTestToken0123456789abcdefABCD"
SITE = "https://github.com"  # html_url and clone_url point at the public site, as GitHub's do
_REPO = r"/repos/(?P<owner>[^/]+)/(?P<name>[^/]+)"
_DOCS = "https://docs.github.com/rest"
# GitHub links a PR to the issues its body closes with these keywords (closingIssuesReferences).
_CLOSING = re.compile(r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?):?\s+#(\d+)\b", re.IGNORECASE)


@dataclass
class Comment:
    repository: str  # owner/name
    number: int
    body: str
    author: str = "isolator[bot]"  # the login it was posted as (`<slug>[bot]` for an App)


class FakeGitHub:
    def __init__(self, token: str = TOKEN) -> None:
        self.token = token
        self.server = RecordingServer()
        self.comments: list[Comment] = []  # the comments posted successfully, in order
        self.edits: list[tuple[int, str]] = []  # comments edited: (comment id, new body), in order
        self.reactions: list[tuple[int, str]] = []  # reactions added: (comment id, content), in order
        self._comment_bodies: dict[int, dict[str, Any]] = {}
        self._repositories: dict[str, dict[str, Any]] = {}  # by lower-cased full name
        self._issues: dict[tuple[str, int], dict[str, Any]] = {}
        self._pulls: dict[tuple[str, int], dict[str, Any]] = {}
        self._closes: dict[tuple[str, int], list[tuple[str, int]]] = {}
        self._failures: dict[str, list[int]] = {}
        # A comment's id names its event (api/platforms/github/keys.py), in a Temporal server the session shares.
        self._ids = itertools.count(uuid.uuid4().int % 10**9 * 1000)
        self.created_pulls: list[dict[str, Any]] = []  # PRs opened through the API, in order
        self.marked_ready: list[int] = []  # PRs marked ready for review, by number, in order
        self.origin: Path | None = None  # a bare repository playing the repositories' git side
        self._statuses: dict[str, list[dict[str, Any]]] = {}  # by commit
        self._check_runs: dict[str, list[dict[str, Any]]] = {}
        self.server.route("GET", _REPO, self._get_repository)
        self.server.route("GET", _REPO + r"/issues/(?P<number>\d+)", self._get_issue)
        self.server.route("GET", _REPO + r"/pulls/(?P<number>\d+)", self._get_pull)
        self.server.route("POST", _REPO + r"/issues/(?P<number>\d+)/comments", self._post_comment)
        self.server.route("GET", _REPO + r"/issues/comments/(?P<comment>\d+)", self._get_comment)
        self.server.route("PATCH", _REPO + r"/issues/comments/(?P<comment>\d+)", self._edit_comment)
        self.server.route("POST", _REPO + r"/issues/comments/(?P<comment>\d+)/reactions", self._react)
        self.server.route("POST", r"/graphql", self._graphql)
        self.server.route("GET", r"/user", self._get_authenticated_user)
        self.server.route("GET", _REPO + r"/pulls", self._list_pulls)
        self.server.route("POST", _REPO + r"/pulls", self._create_pull)
        self.server.route("GET", _REPO + r"/issues/(?P<number>\d+)/comments", self._list_comments)
        self.server.route("GET", _REPO + r"/commits/(?P<sha>[0-9a-f]{40})/status", self._combined_status)
        self.server.route("GET", _REPO + r"/commits/(?P<sha>[0-9a-f]{40})/check-runs", self._list_check_runs)
        from tests.fakes.github_checks import GitHubChecks  # it builds on this module's helpers
        self.checks = GitHubChecks(self)  # check suites and runs, workflow runs, jobs, logs, reviews
        from tests.fakes.github_app import FakeGitHubApps
        self.apps = FakeGitHubApps(self)  # GitHub Apps: their JWT, installation tokens, the manifest flow

    async def start(self) -> str:
        """Start serving; returns the URL to use as GITHUB_API_URL."""
        return await self.server.start()

    async def stop(self) -> None:
        await self.server.stop()

    @property
    def api_url(self) -> str:
        return self.server.url

    # --- configuring ------------------------------------------------------------------------

    def add_repository(self, full_name: str) -> dict[str, Any]:
        owner, name = full_name.split("/")
        repository = {
            "id": next(self._ids),
            "node_id": f"R_{full_name}",
            "name": name,
            "full_name": full_name,
            "owner": _user(owner, "Organization"),
            "private": False,
            "fork": False,
            "html_url": f"{SITE}/{full_name}",
            "url": f"{self.api_url}/repos/{full_name}",
            "issues_url": f"{self.api_url}/repos/{full_name}/issues{{/number}}",
            "pulls_url": f"{self.api_url}/repos/{full_name}/pulls{{/number}}",
            "clone_url": f"{SITE}/{full_name}.git",
            "git_url": f"git://github.com/{full_name}.git",
            "ssh_url": f"git@github.com:{full_name}.git",
            "default_branch": "main",
        }
        self._repositories[full_name.lower()] = repository
        return repository

    def add_issue(self, full_name: str, number: int, title: str = "Found a bug", body: str = "") -> dict[str, Any]:
        repository = self._repository(full_name) or self.add_repository(full_name)
        url = f"{repository['url']}/issues/{number}"
        issue = {
            "id": next(self._ids),
            "node_id": f"I_{full_name}#{number}",
            "url": url,
            "repository_url": repository["url"],
            "comments_url": f"{url}/comments",
            "html_url": f"{repository['html_url']}/issues/{number}",
            "number": number,
            "state": "open",
            "title": title,
            "body": body,
            "user": _user("octocat"),
            "labels": [],
            "comments": 0,
        }
        self._issues[(full_name.lower(), number)] = issue
        return issue

    def add_pull(
        self,
        full_name: str,
        number: int,
        head_ref: str,
        head_sha: str,
        head_repository: str | None = "",
        closes: tuple[int | str, ...] = (),
    ) -> dict[str, Any]:
        """A PR; `head_repository` "" is the same repository, None a deleted fork, else a fork's full name.

        `closes`: issue numbers of this repository, or `other/repo#N` for issues elsewhere.
        """
        base = self._repository(full_name) or self.add_repository(full_name)
        # Every PR is an issue too: the issues API (comments) answers for it.
        issue = self.add_issue(full_name, number, title=f"PR {number}")
        issue["pull_request"] = {
            "url": f"{base['url']}/pulls/{number}", "html_url": f"{base['html_url']}/pull/{number}"
        }
        if head_repository == "":
            head_repo: dict[str, Any] | None = base
        elif head_repository is None:
            head_repo = None
        else:
            head_repo = self._repository(head_repository) or self.add_repository(head_repository)
        pull = {
            "url": f"{base['url']}/pulls/{number}",
            "id": next(self._ids),
            "node_id": f"PR_{full_name}#{number}",
            "html_url": f"{base['html_url']}/pull/{number}",
            "issue_url": issue["url"],
            "number": number,
            "state": "open",
            "title": issue["title"],
            "body": "",
            "user": _user("octocat"),
            "draft": False,
            "merged": False,
            "mergeable": True,  # GitHub's answer once computed; `checks.set_mergeable` changes it
            "mergeable_state": "clean",
            "head": _part(head_ref, head_sha, head_repo),
            "base": _part("main", "0" * 40, base),
        }
        self._pulls[(full_name.lower(), number)] = pull
        self._closes[(full_name.lower(), number)] = [_reference(full_name, item) for item in closes]
        return pull

    def add_comment(self, full_name: str, number: int, body: str, login: str) -> dict[str, Any]:
        """A person's comment (it reaches the service by webhook; not in `comments`, which the service posted)."""
        issue = self._issues[(full_name.lower(), number)]
        return self._store_comment(issue, body, _user(login), association="MEMBER")

    def is_pull(self, full_name: str, number: int) -> bool:
        return (full_name.lower(), number) in self._pulls

    def delete_comment(self, comment_id: int) -> None:
        """Someone deleted the comment: editing it answers 404, as GitHub does."""
        self._comment_bodies.pop(comment_id)

    def fail(self, route: str, status: int, times: int = 1) -> None:
        """Answer the next `times` requests of `route` ("repository", "issue", "pull", "comment", "graphql")
        with this HTTP status and GitHub's error body."""
        self._failures.setdefault(route, []).extend([status] * times)

    def calls(self, route: str) -> int:
        """How many requests reached `route` (as named for `fail`), refused ones included."""
        patterns = {
            "repository": ("GET", _REPO), "issue": ("GET", _REPO + r"/issues/\d+"),
            "pull": ("GET", _REPO + r"/pulls/\d+"), "comment": ("POST", _REPO + r"/issues/\d+/comments"),
            "graphql": ("POST", r"/graphql"), "create_pull": ("POST", _REPO + r"/pulls"),
            "list_pulls": ("GET", _REPO + r"/pulls"),
        }
        method, pattern = patterns[route]
        return len(self.server.received(method, pattern))

    def set_checks(self, sha: str, statuses: tuple[str, ...] = (), check_runs: tuple[tuple[str, str | None], ...] = ()) -> None:
        """The commit's statuses (`success`, `pending`, `failure`...) and check runs ((status, conclusion))."""
        self._statuses[sha] = [{"state": state, "context": f"ci/{index}", "id": next(self._ids)}
                               for index, state in enumerate(statuses)]
        self._check_runs[sha] = [{"id": next(self._ids), "name": f"check {index}", "head_sha": sha, "status": status,
                                  "conclusion": conclusion} for index, (status, conclusion) in enumerate(check_runs)]

    def pulls_of(self, full_name: str) -> list[dict[str, Any]]:
        return [pull for (name, _), pull in sorted(self._pulls.items()) if name == full_name.lower()]

    # --- answering ----------------------------------------------------------------------------

    def _repository(self, full_name: str) -> dict[str, Any] | None:
        return self._repositories.get(full_name.lower())

    def _refusal(self, request: Recorded, route: str, anonymous: str | None = None) -> tuple[int, Any] | None:
        """Injected failures first, then authentication as GitHub does it.

        `anonymous`: None when the route answers without a token (public reads), else GitHub's message.
        """
        failures = self._failures.get(route)
        if failures:
            status = failures.pop(0)
            return status, _error(status)
        authorization = request.headers.get("authorization")
        if authorization is None:
            return None if anonymous is None else (401, {"message": anonymous, "documentation_url": _DOCS})
        scheme, _, given = authorization.partition(" ")
        if scheme.lower() not in ("token", "bearer") or (given != self.token and not self.apps.token_is_valid(given)):
            return 401, {"message": "Bad credentials", "documentation_url": _DOCS}
        return None

    def poster(self, request: Recorded) -> dict[str, Any]:
        """Who a request acts as: the App's bot for an installation token, else the token's owner."""
        given = request.headers.get("authorization", "").partition(" ")[2]
        installation = self.apps.installation_of_token(given)
        for app in self.apps.apps.values():
            if installation in app.installations:
                return _user(f"{app.slug}[bot]", "Bot")
        return _user("isolator[bot]", "Bot")

    def _get_authenticated_user(self, request: Recorded) -> tuple[int, Any]:
        """The token's owner: `isolator doctor` asks it."""
        return self._refusal(request, "user", anonymous="Requires authentication") or (200, _user("isolator-bot"))

    def _get_repository(self, request: Recorded) -> tuple[int, Any]:
        refused = self._refusal(request, "repository")
        repository = self._repository(f"{request.params['owner']}/{request.params['name']}")
        return refused or ((200, repository) if repository else _not_found())

    def _get_issue(self, request: Recorded) -> tuple[int, Any]:
        refused = self._refusal(request, "issue")
        issue = self._issues.get(_key(request))
        return refused or ((200, issue) if issue else _not_found())

    def _get_pull(self, request: Recorded) -> tuple[int, Any]:
        refused = self._refusal(request, "pull")
        pull = self._pulls.get(_key(request))
        if pull and not refused and (tip := self._branch_tip(pull["head"]["ref"])) is not None:
            pull["head"]["sha"] = tip  # as GitHub's: the head follows what is pushed to the branch
        return refused or ((200, pull) if pull else _not_found())

    def _post_comment(self, request: Recorded) -> tuple[int, Any]:
        refused = self._refusal(request, "comment", anonymous="Requires authentication")
        if refused:
            return refused
        issue = self._issues.get(_key(request))
        if issue is None:
            return _not_found()
        body = request.json().get("body")
        if not isinstance(body, str) or not body:
            missing = {"resource": "IssueComment", "code": "missing_field", "field": "body"}
            return 422, {"message": "Validation Failed", "errors": [missing], "documentation_url": _DOCS}
        full_name = f"{request.params['owner']}/{request.params['name']}"
        self.comments.append(Comment(full_name, issue["number"], body, self.poster(request)["login"]))
        return 201, self._store_comment(issue, body, self.poster(request), association="NONE")

    def _store_comment(self, issue: dict[str, Any], body: str, user: dict[str, Any],
                       association: str) -> dict[str, Any]:
        comment_id = next(self._ids)
        issue["comments"] += 1
        self._comment_bodies[comment_id] = comment = {
            "id": comment_id,
            "node_id": f"IC_{comment_id}",
            "url": f"{issue['repository_url']}/issues/comments/{comment_id}",
            "html_url": f"{issue['html_url']}#issuecomment-{comment_id}",
            "issue_url": issue["url"],
            "body": body,
            "user": user,
            "created_at": "2024-01-01T00:00:00Z",
            "updated_at": "2024-01-01T00:00:00Z",
            "author_association": association,
        }
        return comment

    def _get_comment(self, request: Recorded) -> tuple[int, Any]:
        comment = self._comment_bodies.get(int(request.params["comment"]))
        return (200, comment) if comment else _not_found()

    def _edit_comment(self, request: Recorded) -> tuple[int, Any]:
        refused = self._refusal(request, "comment", anonymous="Requires authentication")
        if refused:
            return refused
        comment = self._comment_bodies.get(int(request.params["comment"]))
        if comment is None:
            return _not_found()
        comment["body"] = request.json()["body"]
        self.edits.append((comment["id"], comment["body"]))
        return 200, comment

    def _react(self, request: Recorded) -> tuple[int, Any]:
        refused = self._refusal(request, "reaction", anonymous="Requires authentication")
        if refused:
            return refused
        comment = self._comment_bodies.get(int(request.params["comment"]))
        content = request.json().get("content")
        if comment is None:
            return _not_found()
        if content not in ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"):
            invalid = {"resource": "Reaction", "code": "invalid", "field": "content"}
            return 422, {"message": "Validation Failed", "errors": [invalid], "documentation_url": _DOCS}
        self.reactions.append((comment["id"], content))
        return 201, {"id": next(self._ids), "node_id": f"REA_{comment['id']}", "user": _user("isolator[bot]", "Bot"),
                     "content": content, "created_at": "2024-01-01T00:00:00Z"}

    def _graphql(self, request: Recorded) -> tuple[int, Any]:
        # GitHub's GraphQL API has no anonymous access.
        refused = self._refusal(request, "graphql", anonymous="This endpoint requires you to be authenticated.")
        if refused:
            return refused
        query = request.json()
        variables = query.get("variables") or {}
        if "markPullRequestReadyForReview" in query.get("query", ""):
            return self._mark_ready(variables.get("input") or {})
        if "closingIssuesReferences" not in query.get("query", ""):
            return 200, {"errors": [{"message": "the fake only answers closingIssuesReferences queries"}]}
        full_name = f"{variables.get('owner')}/{variables.get('name')}"
        repository = self._repository(full_name)
        if repository is None:
            return 200, {"data": {"repository": None}, "errors": [{
                "type": "NOT_FOUND", "path": ["repository"], "locations": [{"line": 3, "column": 3}],
                "message": f"Could not resolve to a Repository with the name '{full_name}'."}]}
        number = variables.get("number")
        if (full_name.lower(), number) not in self._pulls:
            return 200, {"data": {"repository": {"pullRequest": None}}, "errors": [{
                "type": "NOT_FOUND", "path": ["repository", "pullRequest"], "locations": [{"line": 4, "column": 5}],
                "message": f"Could not resolve to a PullRequest with the number of {number}."}]}
        nodes = [
            {"number": issue, "repository": {"nameWithOwner": owner_name}}
            for owner_name, issue in self._closes[(full_name.lower(), number)]
        ]
        return 200, {"data": {"repository": {"pullRequest": {"closingIssuesReferences": {"nodes": nodes}}}}}


    def _mark_ready(self, given: dict[str, Any]) -> tuple[int, Any]:
        """The `markPullRequestReadyForReview` mutation PyGithub's `mark_ready_for_review` sends."""
        pull = next((pull for pull in self._pulls.values() if pull["node_id"] == given.get("pullRequestId")), None)
        if pull is None:
            return 200, {"data": None, "errors": [{"type": "NOT_FOUND", "message": "Could not resolve to a node"}]}
        pull["draft"] = False
        self.marked_ready.append(pull["number"])
        return 200, {"data": {"markPullRequestReadyForReview": {"clientMutationId": None,
                                                                "pullRequest": {"isDraft": False}}}}

    def _list_pulls(self, request: Recorded) -> tuple[int, Any]:
        refused = self._refusal(request, "list_pulls")
        if refused:
            return refused
        full_name = f"{request.params['owner']}/{request.params['name']}"
        state = (request.query.get("state") or ["open"])[0]
        head = (request.query.get("head") or [None])[0]
        base = (request.query.get("base") or [None])[0]
        found = [pull for pull in self.pulls_of(full_name)
                 if (state == "all" or pull["state"] == state) and (head is None or pull["head"]["label"] == head)
                 and (base is None or pull["base"]["ref"] == base)]
        return 200, found

    def _create_pull(self, request: Recorded) -> tuple[int, Any]:
        refused = self._refusal(request, "create_pull", anonymous="Requires authentication")
        if refused:
            return refused
        full_name = f"{request.params['owner']}/{request.params['name']}"
        asked = request.json()
        head, base = asked.get("head"), asked.get("base")
        sha = self._branch_tip(head) if isinstance(head, str) else None
        if not asked.get("title") or not isinstance(base, str) or (self.origin is not None and sha is None):
            invalid = {"resource": "PullRequest", "code": "invalid", "field": "head" if asked.get("title") else "title"}
            return 422, {"message": "Validation Failed", "errors": [invalid], "documentation_url": _DOCS}
        if any(pull["head"]["ref"] == head and pull["state"] == "open" for pull in self.pulls_of(full_name)):
            exists = {"resource": "PullRequest", "code": "custom",
                      "message": f"A pull request already exists for {full_name.split('/')[0]}:{head}."}
            return 422, {"message": "Validation Failed", "errors": [exists], "documentation_url": _DOCS}
        taken = [number for (name, number) in [*self._issues, *self._pulls] if name == full_name.lower()]
        number = max(taken, default=0) + 1
        closes = tuple(int(issue) for issue in _CLOSING.findall(asked.get("body") or ""))
        pull = self.add_pull(full_name, number, head, sha or "0" * 40, closes=closes)
        pull.update(title=asked["title"], body=asked.get("body") or "", draft=bool(asked.get("draft")))
        pull["base"]["ref"] = base
        self._issues[(full_name.lower(), number)]["title"] = asked["title"]
        self.created_pulls.append(pull)
        return 201, pull

    def _branch_tip(self, branch: str) -> str | None:
        if self.origin is None:
            return None
        found = subprocess.run(["git", "-C", str(self.origin), "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"],
                               capture_output=True, text=True)
        return found.stdout.strip() or None

    def _list_comments(self, request: Recorded) -> tuple[int, Any]:
        issue = self._issues.get(_key(request))
        if issue is None:
            return _not_found()
        return 200, [comment for comment in self._comment_bodies.values() if comment["issue_url"] == issue["url"]]

    def _combined_status(self, request: Recorded) -> tuple[int, Any]:
        statuses = self._statuses.get(request.params["sha"], [])
        states = {status["state"] for status in statuses}
        state = "failure" if states & {"failure", "error"} else "pending" if "pending" in states or not statuses \
            else "success"
        return 200, {"state": state, "sha": request.params["sha"], "total_count": len(statuses), "statuses": statuses}

    def _list_check_runs(self, request: Recorded) -> tuple[int, Any]:
        runs = self._check_runs.get(request.params["sha"], [])
        return 200, {"total_count": len(runs), "check_runs": runs}


def _user(login: str, kind: str = "User") -> dict[str, Any]:
    return {"login": login, "id": zlib.crc32(login.encode()) % 10_000_000, "node_id": f"U_{login}", "type": kind,
            "site_admin": False, "html_url": f"{SITE}/{login}"}


def _part(ref: str, sha: str, repository: dict[str, Any] | None) -> dict[str, Any]:
    owner = repository["owner"]["login"] if repository else "ghost"
    return {"label": f"{owner}:{ref}", "ref": ref, "sha": sha, "user": _user(owner), "repo": repository}


def _reference(full_name: str, item: int | str) -> tuple[str, int]:
    if isinstance(item, int):
        return full_name, item
    other, _, number = item.rpartition("#")
    return other, int(number)


def _key(request: Recorded) -> tuple[str, int]:
    return f"{request.params['owner']}/{request.params['name']}".lower(), int(request.params["number"])


def _not_found() -> tuple[int, Any]:
    return 404, {"message": "Not Found", "documentation_url": _DOCS, "status": "404"}


def _error(status: int) -> dict[str, Any]:
    messages = {401: "Bad credentials", 403: "Resource not accessible by integration", 404: "Not Found",
                422: "Validation Failed", 429: "API rate limit exceeded", 500: "Server Error",
                502: "Server Error", 503: "Service Unavailable"}
    return {"message": messages.get(status, "Error"), "documentation_url": _DOCS, "status": str(status)}
