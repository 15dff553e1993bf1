"""The service's in-process metrics (docs/observability.md): only what no table records, counted where it
happens. What PostgreSQL records (runs, cost, approvals, worktrees, warm worktrees, archives) is read from
it when /metrics is scraped (api/metrics_state.py), so it survives restarts and adds up across processes.

Every label takes a value from a short, fixed set (a platform, an outcome, a reason's kind) or a codebase's
name: never a conversation, a user or a branch, so that the series stay few whatever the traffic.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, disable_created_metrics

# A `_created` series beside each counter doubles the output and no dashboard or alert reads it.
disable_created_metrics()

# Ours alone: the default registry's process and platform collectors are not wanted on every scrape.
REGISTRY = CollectorRegistry(auto_describe=True)

# Seconds: a reuse takes tens of milliseconds, a create with its set-up up to minutes.
DECISION_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)

MESSAGES = Counter("isolator_messages", "Messages handled, by platform and outcome (reused, attached, shared, "
                   "adopted, created, restored, refused, command, closed, limit, no_codebase, failed)",
                   ["platform", "outcome"], registry=REGISTRY)
DECISION_SECONDS = Histogram("isolator_isolation_decision_seconds", "From a message's arrival to its worktree "
                             "decided (its workflow's end), by outcome", ["outcome"], buckets=DECISION_BUCKETS,
                             registry=REGISTRY)
WARM_MISSES = Counter("isolator_warm_misses", "Creates that found no warm worktree to claim, by codebase and why "
                      "(empty, being_made, setup_failed, other)", ["codebase", "why"], registry=REGISTRY)
WARM_REFILL_FAILURES = Counter("isolator_warm_refill_failures", "Problems a warm pool's refill met (a failed "
                               "set-up, a full disk, the disk budget), by codebase", ["codebase"], registry=REGISTRY)
PR_FIX_RUNS = Counter("isolator_pr_fix_runs", "Fix runs the pull-request loop started for red CI",
                      registry=REGISTRY)
PR_FIX_STOPS = Counter("isolator_pr_fix_stops", "Times the loop stopped fixing a pull request (at the cap of "
                       "attempts, or a head it may not fix)", registry=REGISTRY)
PR_GREEN_AFTER_FIXES = Counter("isolator_pr_green_after_fixes", "Pull requests whose CI turned green after fix runs",
                               registry=REGISTRY)
EGRESS_REFUSALS = Counter("isolator_sandbox_egress_refusals", "Connections a run's egress proxy refused, by reason "
                          "(not_allowed, private_address, link_local, no_address)", ["reason"], registry=REGISTRY)
LIMIT_STOPS = Counter("isolator_sandbox_limit_stops", "Runs stopped at a limit of their sandbox (memory, processes)",
                      ["limit"], registry=REGISTRY)
SIGNATURE_FAILURES = Counter("isolator_webhook_signature_failures", "Webhook requests refused for a missing or "
                             "wrong signature, by platform", ["platform"], registry=REGISTRY)
REDELIVERIES = Counter("isolator_webhook_redeliveries", "Deliveries seen before (a message whose workflow had "
                       "finished, a button press), by platform and kind", ["platform", "kind"], registry=REGISTRY)
CLEANUP_RUNS = Counter("isolator_cleanup_runs", "Scheduled cleanups finished (every codebase swept)",
                       registry=REGISTRY)
CLEANUP_WORKTREES = Counter("isolator_cleanup_worktrees", "What codebase sweeps did with worktrees, by action "
                            "(removed, kept, marked_gone, hibernated, archive_pruned, orphan_found) and why",
                            ["action", "why"], registry=REGISTRY)


def egress_reason(reason: str) -> str:
    """The kind of an egress refusal's reason (isolator/egress_rules.py words it, with addresses in it)."""
    if reason == "not on the allow-list":
        return "not_allowed"
    if "link-local or reserved" in reason:
        return "link_local"
    if "loopback or private" in reason:
        return "private_address"
    return "no_address"


def limit_kind(controller: str) -> str:
    return "memory" if controller == "memory" else "processes"
