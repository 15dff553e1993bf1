"""Reading the GitHub events of the pull-request loop (docs/pr-loop.md): a submitted review, and a check
suite or workflow run that completed. Pure functions, no I/O; payload shapes are octokit/webhooks'.

Whether the PR is one the service works on is not known here: the API asks the database before it
starts anything (api/platforms/github/webhook.py), and the loop's workflow looks again."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from api.platforms.github.events import Ignored, PayloadError, number_at, object_at, string_at
from isolator.contracts.pr_loop import FeedbackEvent
from isolator.trust import GitHubSender

# Conclusions that mean the head is red; `cancelled` and `skipped` say nothing about the code.
RED_CONCLUSIONS = frozenset({"failure", "timed_out", "startup_failure", "action_required"})
REVIEW_STATES = frozenset({"changes_requested", "commented"})  # an approval asks for nothing


@dataclass(frozen=True)
class Feedback:
    event: FeedbackEvent
    sender: GitHubSender | None  # a review's author (judged by the allow rule); None for CI, sent by no person


def parse_feedback(event: str, payload: Mapping[str, Any]) -> Feedback | Ignored | None:
    """The loop's reading of a delivery; None when the event is not one of the loop's."""
    action = payload.get("action")
    if event == "pull_request_review" and action == "submitted":
        return _review(payload)
    if event in ("check_suite", "workflow_run") and action == "completed":
        return _ci(event, payload)
    if event == "push":
        return _base_moved(payload)
    return None


def _base_moved(payload: Mapping[str, Any]) -> Feedback | Ignored | None:
    """A push to the default branch: the PRs of ours on it may no longer merge (docs/pr-loop.md)."""
    repository = object_at(payload, "repository")
    default = repository.get("default_branch")
    ref, after = payload.get("ref"), payload.get("after")
    if not isinstance(ref, str) or not isinstance(default, str) or ref != f"refs/heads/{default}":
        return None  # a push to another branch: nothing of the loop's (CI reports on it)
    if not isinstance(after, str) or not after.strip("0"):
        return Ignored("the default branch was deleted")
    return Feedback(FeedbackEvent(kind="update_branch", repository=_repository(payload), key=f"base:{after}",
                                  head_sha=after, head_branch=default, conclusion="base_moved"), None)


def _review(payload: Mapping[str, Any]) -> Feedback | Ignored:
    review, pull = object_at(payload, "review"), object_at(payload, "pull_request")
    state = str(review.get("state") or "").lower()
    if state not in REVIEW_STATES:
        return Ignored(f"a review that is {state or 'without a state'} asks for no change")
    review_id = review.get("id")
    if not isinstance(review_id, int) or isinstance(review_id, bool):
        raise PayloadError("`review.id` is missing or not an integer")
    user = object_at(review, "review.user")
    login = string_at(user, "review.user", "login")
    association = review.get("author_association")
    sender = GitHubSender(login=login, association=association if isinstance(association, str) else "NONE",
                          is_bot=user.get("type") == "Bot")
    head = object_at(pull, "pull_request.head")
    return Feedback(FeedbackEvent(
        kind="review", repository=_repository(payload), key=f"review:{review_id}", number=number_at(pull, "pull_request"),
        head_sha=string_at(head, "pull_request.head", "sha"), head_branch=string_at(head, "pull_request.head", "ref"),
        review_id=review_id, sender=login,
    ), sender)


def _ci(event: str, payload: Mapping[str, Any]) -> Feedback | Ignored:
    body = object_at(payload, event)
    conclusion = body.get("conclusion")
    if not isinstance(conclusion, str):
        return Ignored(f"{event} completed without a conclusion")
    head_sha = string_at(body, event, "head_sha")
    branch = body.get("head_branch")
    numbers = [pull.get("number") for pull in body.get("pull_requests") or [] if isinstance(pull, Mapping)]
    red = conclusion in RED_CONCLUSIONS
    if not red and conclusion != "success":
        return Ignored(f"a {event} that concluded {conclusion} says nothing of the code")
    # A red head starts one run, whichever report comes first; every green report is looked at, as the
    # head is green only once all its checks are.
    key = f"ci-red:{head_sha}" if red else f"ci-green:{head_sha}:{event}:{body.get('id')}"
    return Feedback(FeedbackEvent(
        kind="ci", repository=_repository(payload), key=key,
        number=next((n for n in numbers if isinstance(n, int) and not isinstance(n, bool)), None),
        head_sha=head_sha, head_branch=branch if isinstance(branch, str) else None, conclusion=conclusion,
        pusher=_actor(body),
    ), None)


def _actor(body: Mapping[str, Any]) -> str | None:
    """Who pushed the head, as a workflow run says it (`actor`); a check suite does not say."""
    actor = body.get("actor")
    login = actor.get("login") if isinstance(actor, Mapping) else None
    return login if isinstance(login, str) and login else None


def _repository(payload: Mapping[str, Any]) -> str:
    full_name = string_at(object_at(payload, "repository"), "repository", "full_name")
    if full_name.count("/") != 1:
        raise PayloadError("`repository.full_name` must be `owner/name`")
    return full_name
