"""A firing's steps: decide whether it runs and with which prompt, wait for its run, and report."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid

import asyncpg
from temporalio import activity
from temporalio.client import Client

from activities.automations import schedules
from activities.automations.records import AutomationRecords
from activities.automations.reports import report_text
from activities.chat.replies import ReplyActivities
from isolator.automation_places import NoPlace, place_conversation
from isolator.automation_prompts import render_prompt
from isolator.contracts.automation import (
    FinishFiring,
    FiringNote,
    FiringPlan,
    PrepareFiring,
    RunState,
    RunWait,
)
from isolator.contracts.message import ReplyInput
from isolator.contracts.codebase import repository_full_name
from isolator.settings import Settings

# A run's statuses that end it; `waiting` (a person's answer) goes on in the conversation's next run.
FINAL = ("done", "failed", "timed_out", "stopped", "interrupted", "dropped")
POLL_SECONDS = 0.5


class AutomationActivities:
    def __init__(self, settings: Settings, pool: asyncpg.Pool, client: Client, replies: ReplyActivities) -> None:
        self.settings = settings
        self.pool = pool
        self.client = client
        self.records = AutomationRecords(pool)
        self.replies = replies

    @activity.defn
    async def prepare_firing(self, request: PrepareFiring) -> FiringPlan:
        firing = request.firing
        stored = await self.records.get(firing.name)
        if self.settings.automations == "off":
            return FiringPlan("skipped", "automations are switched off on this service (AUTOMATIONS=off)")
        if stored is None:
            return FiringPlan("skipped", f"there is no automation `{firing.name}` any more")
        automation = stored.automation
        if stored.paused:
            return FiringPlan("skipped", f"`{automation.name}` is paused ({stored.paused_reason or 'by a person'})")
        codebase = await self.pool.fetchrow("SELECT name, repository_url FROM codebases WHERE id = $1",
                                            uuid.UUID(stored.codebase_id))
        try:
            place = place_conversation(automation.report, repository_full_name(codebase["repository_url"]), firing.origin)
        except NoPlace as no_place:
            return FiringPlan("skipped", str(no_place))
        plan = FiringPlan("run", report_platform=place.platform, report_conversation=place.conversation_id,
                          quiet=automation.quiet, repository_url=codebase["repository_url"], results=automation.results)
        budget = automation.daily_budget_usd
        if budget is not None and (spent := await self.records.spent_today(automation.name)) >= budget:
            return dataclasses.replace(plan, outcome="refused", reason=f"its daily budget is spent (${spent:.2f} of "
                                                                       f"${budget:g} today, UTC)")
        rendered = render_prompt(automation.prompt, firing.event, {"codebase": codebase["name"], "name": automation.name})
        if rendered.problem:
            return dataclasses.replace(plan, outcome="refused", reason=rendered.problem)
        conversation = automation.name if automation.memory == "keep" else \
            request.workflow_id.removeprefix("automation:")
        await self.records.start_firing(request.workflow_id, automation.name, firing.trigger, conversation,
                                        place.platform, place.conversation_id)
        # The firing's conversation is its codebase's from the start, whether or not it has a URL.
        await self.pool.execute(
            """INSERT INTO conversations (platform, platform_conversation_id, codebase_id) VALUES ('automation', $1, $2)
               ON CONFLICT (platform, platform_conversation_id)
               DO UPDATE SET codebase_id = coalesce(conversations.codebase_id, excluded.codebase_id)""",
            conversation, uuid.UUID(stored.codebase_id))
        return dataclasses.replace(plan, prompt=rendered.text, conversation_id=conversation)

    @activity.defn
    async def firing_run(self, workflow_id: str, run_id: str) -> None:
        await self.records.set_firing_run(workflow_id, run_id)

    @activity.defn
    async def wait_for_run(self, wait: RunWait) -> RunState:
        """The conversation's latest run since the firing's first: when it ended, or `seconds` passed."""
        deadline = asyncio.get_running_loop().time() + wait.seconds
        while True:
            row = await self.pool.fetchrow(
                """SELECT id, status, cost_usd, output, cardinality(changed_files) AS changed, coalesce(commits, 0) AS commits
                   FROM agent_runs WHERE platform = 'automation' AND conversation_id = $1
                     AND queued_at >= (SELECT queued_at FROM agent_runs WHERE id = $2)
                   ORDER BY queued_at DESC LIMIT 1""",
                wait.conversation_id, uuid.UUID(wait.first_run_id))
            if row is not None and row["status"] in FINAL:
                total = await self.pool.fetchval(
                    """SELECT coalesce(sum(cost_usd), 0) FROM agent_runs WHERE platform = 'automation'
                         AND conversation_id = $1 AND queued_at >= (SELECT queued_at FROM agent_runs WHERE id = $2)""",
                    wait.conversation_id, uuid.UUID(wait.first_run_id))
                closing = await self.pool.fetchval(  # the run's message as it ended: its last line says why
                    r"""SELECT body FROM outbound_messages WHERE idempotency_key ~ ('^agent-run:' || $1 || ':')
                        ORDER BY id DESC LIMIT 1""", str(row["id"]))
                return RunState(True, row["status"], str(row["id"]), float(total), row["output"],
                                bool(row["changed"] or row["commits"]), closing or "")
            if asyncio.get_running_loop().time() >= deadline:
                return RunState(False)
            activity.heartbeat()
            await asyncio.sleep(POLL_SECONDS)

    @activity.defn
    async def note_firing(self, note: FiringNote) -> None:
        await self._tell(note.plan, note.text, note.key)

    @activity.defn
    async def finish_firing(self, finish: FinishFiring) -> bool:
        """Recorded once and reported; True when this failure paused the automation (its schedule too)."""
        paused = await self.records.finish_firing(finish.workflow_id, finish.name, finish.end)
        text = report_text(finish.name, finish.end, finish.plan.results, paused)
        if text and not (finish.plan.quiet and finish.end.state == "nothing"):
            await self._tell(finish.plan, text, f"{finish.workflow_id}:report")
        if paused:
            await schedules.pause_schedule(self.client, finish.name, True, f"failed {finish.end.summary[:200]}")
        return paused

    async def _tell(self, plan: FiringPlan, text: str, key: str) -> None:
        await self.replies.deliver_once(ReplyInput(plan.report_platform, plan.report_conversation, text, key))
