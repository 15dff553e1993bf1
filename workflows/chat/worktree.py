"""`/worktree create|list|remove|link|cleanup|orphans|setup|why|removed|restore`, run inside the
MessageWorkflow (the archive commands in worktree_archives.py)."""

from __future__ import annotations

import re

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from isolator.cleanup_rules import cleanup_verdict, is_fresh, live_conversations, plan_cleanup
    from isolator.contracts.cleanup import CodebaseCleanupInput
    from isolator.contracts.codebase import Codebase
    from isolator.contracts.environment import (
        DestroyEnvironmentInput,
        DestroyRequest,
        IdentityQuery,
        MoveConversationInput,
        NamedEnvironmentQuery,
    )
    from isolator.contracts.message import Conversation, MessageInput
    from isolator.contracts.worktree import ExplainRequest, WorktreeReady, WorktreeRequest
    from workflows.chat import archive_texts, worktree_archives, worktree_texts
    from workflows.cleanup import CodebaseCleanupWorkflow, view_codebase
    from workflows.errors import STEP_FAILURES, user_error
    from workflows.lookups import count_for_limit
    from workflows.naming import task_slug
    from workflows.provisioning import Provisioner, Reply, environment_ref
    from workflows.steps import versions
    from workflows.steps.chat import conversations
    from workflows.steps.environments import (
        signals as environment_signals,
        records as environments,
        isolation,
        worktree_facts,
    )
    from workflows.steps.warm import pool as warm_pool

_LINK_TARGET = re.compile(r"^(issue|pr|thread|task)-(.+)$")


class WorktreeCommands:
    def __init__(self, message: MessageInput, conversation: Conversation, codebase: Codebase, reply: Reply) -> None:
        self.message = message
        self.conversation = conversation
        self.codebase = codebase
        self.reply = reply
        self.provision = Provisioner(message, conversation, codebase, reply)

    async def run(self, words: list[str]) -> None:
        """`/worktree <subcommand> <args>`: `words` are what follows `/worktree`."""
        subcommand, args = (words[0].lower(), words[1:]) if words else ("", [])
        handlers = {
            "create": self._create, "list": self._list, "remove": self._remove, "link": self._link,
            "cleanup": self._cleanup, "orphans": self._orphans, "setup": self._setup, "why": self._why,
            "removed": self._removed, "restore": self._restore,
        }
        handler = handlers.get(subcommand)
        if handler is None:
            await self.reply(worktree_texts.unknown_subcommand(words[0]) if words else worktree_texts.USAGE)
            return
        try:
            await handler(args)
        except STEP_FAILURES as error:
            # The user's to fix (a folder in the way, a bad branch): say so; a fault is raised again.
            await self.reply(worktree_texts.failed(subcommand, user_error(error)))

    async def _create(self, args: list[str]) -> None:
        if not args:
            await self.reply(worktree_texts.CREATE_USAGE)
            return
        name = " ".join(args)  # `a b` is one name with a space, not two arguments
        slug = task_slug(name)
        if slug is None:
            await self.reply(worktree_texts.invalid_task_name(name))
            return
        existing = await environments.find_environment_by_identity(IdentityQuery(self.codebase.id, "task", slug))
        current = self.conversation.environment
        if existing is not None and current is not None and current.id == existing.id:
            await self.reply(worktree_texts.already_linked(existing.branch_name, existing.working_path))
            return
        if existing is not None:
            await self.provision.attach(
                "attached", existing, worktree_texts.task_exists(existing.branch_name, existing.working_path)
            )
            return

        def announce(worktree: WorktreeReady) -> str:
            return worktree_texts.task_created(worktree)

        if await self.provision.make_room(await count_for_limit(self.codebase.id)):
            await self.provision.create("task", slug, WorktreeRequest(self.codebase, f"task-{slug}"), announce)

    async def _list(self, args: list[str]) -> None:
        view = await view_codebase(self.codebase, measure_disk=True)
        mine = self.conversation.environment.id if self.conversation.environment else None
        sizes = {state.environment_id: state.disk_bytes for state in view.survey.states}
        lines = [(e.ref.branch, e.ref.working_path, e.ref.environment_id == mine, sizes.get(e.ref.environment_id))
                 for e in view.listing.environments]
        warm = await warm_pool.pool_lines(self.codebase)
        await self.reply(worktree_texts.listing(self.codebase.name, lines, view.counts) + (f"\n{warm}" if warm else ""))

    async def _remove(self, args: list[str]) -> None:
        force = "--force" in args
        names = [arg for arg in args if arg != "--force"]
        if len(names) > 1 or any(name.startswith("-") for name in names):
            await self.reply(worktree_texts.USAGE)
            return
        listing = await environments.list_environments(self.codebase.id)
        if names:
            target = await environments.find_named_environment(NamedEnvironmentQuery(self.codebase.id, names[0]))
            if target is None:
                await self.reply(worktree_texts.unknown_worktree(names[0], self.codebase.name))
                return
        else:
            target = self.conversation.environment
            if target is None or target.status != "active":
                await self.reply(worktree_texts.no_worktree_here("remove"))
                return
        tracked = next((e for e in listing.environments if e.ref.environment_id == target.id), None)
        mine = self.conversation.environment is not None and self.conversation.environment.id == target.id
        others = (live_conversations(tracked, listing.stale_threshold_days) if tracked else 0) - (1 if mine else 0)
        if others > 0:
            await self.reply(worktree_texts.still_used(target.branch_name, others))
            return
        request = DestroyRequest(force=force, reason="removed by command", key=workflow.info().workflow_id)
        report = await environment_signals.destroy_environment(
            DestroyEnvironmentInput(environment_ref(target, self.codebase), request)
        )
        await self.reply(report.message)  # what was removed, archived or refused, said once

    async def _link(self, args: list[str]) -> None:
        if len(args) != 1:
            await self.reply(worktree_texts.LINK_USAGE)
            return
        if not _LINK_TARGET.match(args[0]):  # no worktree is named so: said without looking
            await self.reply(worktree_texts.not_a_worktree_name(args[0]) + "\n\n" + worktree_texts.LINK_USAGE)
            return
        target = await environments.find_named_environment(NamedEnvironmentQuery(self.codebase.id, args[0]))
        if target is None:
            await self.reply(worktree_texts.unknown_worktree(args[0], self.codebase.name) + "\n\n"
                             + worktree_texts.LINK_USAGE)
            return
        current = self.conversation.environment
        if current is not None and current.id == target.id:
            await self.reply(worktree_texts.already_linked(target.branch_name, target.working_path))
            return
        moved = await conversations.move_conversation(
            MoveConversationInput(self.conversation.row_id, target.id, target.working_path)
        )
        await self.provision.tell_environment(target)  # attaches here, detaches from the previous one
        left_alone = moved.previous_branch if moved is not None and moved.previous_left_alone else None
        await self.reply(worktree_texts.linked(target.branch_name, target.working_path, left_alone))

    async def _cleanup(self, args: list[str]) -> None:
        dry_run = "--dry-run" in args
        kinds = [arg for arg in args if arg != "--dry-run"]
        if len(kinds) != 1 or kinds[0] not in ("merged", "stale") or args.count("--dry-run") > 1:
            await self.reply(worktree_texts.USAGE)
            return
        if dry_run:  # the same survey and rules as the cleanup, and nothing removed
            view = await view_codebase(self.codebase, plans_cleanup=True)
            plan = plan_cleanup(view.listing.environments, view.survey, kinds, view.listing.stale_threshold_days)  # type: ignore[arg-type]
            await self.reply(worktree_texts.cleanup_preview(kinds[0], plan))
            return
        args = kinds
        wfid = workflow.info().workflow_id
        report = await workflow.execute_child_workflow(
            CodebaseCleanupWorkflow.run, CodebaseCleanupInput(self.codebase, [args[0]], key=wfid),  # type: ignore[list-item]
            id=f"{wfid}:cleanup",
        )
        view = await view_codebase(self.codebase)
        await self.reply(worktree_texts.cleanup_result(args[0], report, view.counts))

    async def _orphans(self, args: list[str]) -> None:
        survey = (await view_codebase(self.codebase)).survey
        missing = [state.working_path for state in survey.states if not state.exists]
        await self.reply(worktree_texts.orphans(survey.orphans, missing))

    async def _why(self, args: list[str]) -> None:
        if len(args) > 1 or any(arg.startswith("-") for arg in args):
            await self.reply(worktree_texts.WHY_USAGE)
            return
        own = self.conversation.environment
        if args:
            name = args[0]
        elif own is not None and own.status in ("active", "hibernated"):
            name = own.branch_name  # no name: this conversation's own, as `/worktree remove` takes it
        else:
            await self.reply(worktree_texts.no_worktree_here("why"))
            return
        target = await environments.find_named_environment(NamedEnvironmentQuery(self.codebase.id, name))
        if target is None or target.status == "hibernated":  # its folder is gone: what its archive holds
            await worktree_archives.explain_removed(name, self.codebase, self.reply)
            return
        view = await view_codebase(self.codebase, plans_cleanup=True)
        tracked = next((e for e in view.listing.environments if e.ref.environment_id == target.id), None)
        if tracked is None:
            await self.reply(worktree_texts.unknown_worktree(name, self.codebase.name))
            return
        facts = await worktree_facts.explain_worktree(ExplainRequest(self.codebase, target.working_path,
                                                                     target.branch_name))
        threshold = view.listing.stale_threshold_days
        plan = plan_cleanup(view.listing.environments, view.survey, ["missing", "merged", "stale"], threshold)
        state = next((s for s in view.survey.states if s.environment_id == target.id), None)
        fresh = state is not None and is_fresh(tracked.start_commit, state.tip)
        await self.reply(worktree_texts.why(tracked, facts, cleanup_verdict(tracked.ref, plan, fresh), threshold,
                                            fresh))

    async def _removed(self, args: list[str]) -> None:
        if args:
            await self.reply(worktree_texts.USAGE)
            return
        await worktree_archives.list_removed(self.codebase, self.reply)

    async def _restore(self, args: list[str]) -> None:
        if len(args) != 1 or args[0].startswith("-"):
            await self.reply(archive_texts.RESTORE_USAGE)
            return
        await worktree_archives.restore_named(args[0], self.message, self.conversation, self.codebase, self.reply)

    async def _setup(self, args: list[str]) -> None:
        target = self.conversation.environment
        if args or target is None or target.status != "active":
            await self.reply(worktree_texts.USAGE if args else worktree_texts.NOTHING_TO_SET_UP)
            return
        state = await environment_signals.set_up_again(environment_ref(target, self.codebase))
        await self.reply(worktree_texts.setup_ran(target.branch_name, state))


async def status_counts(codebase: Codebase) -> str:
    """The `Worktrees: N/LIMIT` block of `/status`, with the disk they use."""
    if versions.counts_on_host():
        counted = await isolation.count_worktrees(codebase)
        return (worktree_texts.counts(counted.counts, counted.stale_threshold_days) + "\n"
                + worktree_texts.disk_total(counted.sizes)
                + (f"\n{counted.sandbox_warning}" if counted.sandbox_warning else ""))
    view = await view_codebase(codebase, measure_disk=True)
    return (worktree_texts.counts(view.counts, view.listing.stale_threshold_days) + "\n"
            + worktree_texts.disk_total([state.disk_bytes for state in view.survey.states if state.exists]))
