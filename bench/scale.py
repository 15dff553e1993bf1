"""At scale: the cleanup's classification of 5,000 environments over 50 codebases, `/status` on a
codebase with 1,000, and the reuse path with 10,000 environment rows in the database.

The environments are real: every one is a worktree on disk (a small repository: five files), on a
branch made with `git fast-import` in one process per repository, and its rows (the environment and
its conversation) are inserted in bulk, as the service would have left them. Each codebase holds the
same mix (`PATTERN`, one period of 50): work merged into main by a merge commit, by a rebase (the
same patch on main) and by a squash (the branches' change in one commit of main); stale worktrees
with no work of their own and stale ones with unpushed commits; active ones with work in progress
(1-3 commits of their own, unmerged); fresh ones, still at the commit they started from; a few of
the merged and stale ones dirty (an untracked file), and a few merged ones still used by a
conversation active yesterday. Main moves on between branches, so each forks at its own commit.

- **classification**: every codebase's list, survey and plan (`isolator.cleanup_rules.plan_cleanup`),
  as `CodebaseCleanupWorkflow` does before it removes anything; timed two ways, one codebase after
  the other as the scheduled cleanup goes: the activities called directly in this process with a
  git runner that counts (and attributes) every git process, and through the service, one
  `/worktree cleanup merged --dry-run` per codebase over the test adapter. The 5 s target is held
  to the first, the classification itself; the second adds a message workflow per codebase. A
  process counts for an environment when it is about it alone (`git status` in its worktree, a
  `git cherry`, `merge-tree` or `for-each-ref --contains` of its tip), for the codebase otherwise;
  the target is none on an environment that is no candidate;
- **status at scale**: `/status` over the test adapter, from a conversation working in a codebase
  of 1,000 such environments;
- **reuse with 10,000 rows**: the reuse path of bench/messages.py with the database nearly empty
  and with 10,000 more environment rows (9,000 destroyed, 1,000 active in other codebases, each
  with its conversation), in windows empty, loaded, loaded, empty: the rows are deleted (and the
  table vacuumed) between the two loaded windows and the last empty one, so that the machine's
  drift falls on both sides alike.
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import subprocess
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg

from activities.database import create_pool
from activities.environments.isolation import IsolationActivities
from activities.environments.records import EnvironmentActivities
from activities.git.paths import worktree_path
from activities.git.runner import GitResult, run_git
from activities.providers import build_providers
from bench.figures import Figure, Latency, timed, verdict
from bench.messages import say, start_conversation
from bench.repos import IDENTITY, git
from bench.stack import Stack
from isolator.cleanup_rules import plan_cleanup, tracked_worktrees
from isolator.contracts.codebase import Codebase
from isolator.contracts.environment import EnvironmentsOfCodebase
from isolator.contracts.worktree import SurveyInput
from isolator.settings import load_settings

CLASSIFICATION_SECONDS = 5.0
STATUS_P50_MS = 200.0
ROWS_RATIO = 1.1
KINDS = ["merged", "stale", "missing"]  # every rule, as the scheduled cleanup applies them


@dataclass(frozen=True)
class Kind:
    name: str
    commits: int = 0  # of its own, on its branch
    merge: str = ""  # how main took them: "ancestry" (a merge commit), "patch" (a rebase), "squash"
    days: int = 0  # since its conversation was last active
    closed: bool = False  # its conversation is closed (a merged one's, mostly)
    dirty: bool = False  # an untracked file in its worktree


# One period of every codebase's mix: 8 cleanup candidates in 50 (merged or stale), 42 active. The
# scheduled cleanup runs every 6 hours: what stays a candidate between runs is the recently merged
# or stale, and what a cleanup keeps (still used, unpushed).
PATTERN = (
    [Kind("merged", 1, "ancestry", days=2, closed=True), Kind("merged", 2, "ancestry", days=3, closed=True, dirty=True),
     Kind("merged", 2, "ancestry", days=1)]
    + [Kind("merged by rebase", 1, "patch", days=2, closed=True)]
    + [Kind("merged by squash", 2, "squash", days=2, closed=True)]
    + [Kind("stale", days=30), Kind("stale", days=45, dirty=True), Kind("stale, unpushed", 2, days=40)]
    + [Kind("active, work in progress", 1 + number % 3, days=number % 4) for number in range(17)]
    + [Kind("fresh", days=number % 5) for number in range(25)]
)
assert len(PATTERN) == 50


def mix(count: int, seed: int) -> list[Kind]:
    """`count` environments in the pattern's proportions, shuffled within each period."""
    kinds: list[Kind] = []
    shuffler = random.Random(seed)
    while len(kinds) < count:
        period = list(PATTERN)
        shuffler.shuffle(period)
        kinds += period
    return kinds[:count]


@dataclass
class Planted:
    """One environment as made on disk: the facts its rows record."""

    kind: Kind
    branch: str
    workflow_id: str
    path: Path
    start: str  # commit
    environment_id: str = field(default_factory=lambda: str(uuid.uuid4()))


@dataclass
class PlantedCodebase:
    id: str
    name: str
    repository: Path
    planted: list[Planted]


def _data(text: str) -> str:
    raw = text.encode()
    return f"data {len(raw)}\n{text}\n"


class _History:
    """A `git fast-import` stream: main, and a branch per environment."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.marks = 0
        self.clock = 1_700_000_000

    def commit(self, ref: str, message: str, parent: int | None, files: dict[str, str],
               merge: int | None = None) -> int:
        self.marks += 1
        self.clock += 60
        self.lines.append(f"commit {ref}\nmark :{self.marks}\n"
                          f"committer Bench <bench@example.invalid> {self.clock} +0000\n{_data(message)}")
        if parent is not None:
            self.lines.append(f"from :{parent}\n")
        if merge is not None:
            self.lines.append(f"merge :{merge}\n")
        for name, text in files.items():
            self.lines.append(f"M 100644 inline {name}\n{_data(text)}")
        self.lines.append("\n")
        return self.marks

    def reset(self, ref: str, at: int) -> None:
        self.lines.append(f"reset {ref}\nfrom :{at}\n\n")


def plant_repository(repository: Path, worktree_base: Path, name: str, kinds: list[Kind]) -> list[Planted]:
    """The repository (five files on main), its history and a branch per environment, in one
    fast-import; the main checkout populated. Worktrees come after (`add_worktrees`)."""
    repository.mkdir(parents=True)
    git("init", "-q", "-b", "main", cwd=repository)
    history = _History()
    main = history.commit("refs/heads/main", "initial", None,
                          {f"file{number}.txt": f"line {number}\n" * 20 for number in range(5)})
    starts: list[int] = []
    for index, kind in enumerate(kinds):
        if index % 3 == 0:  # other work lands on main between branches
            main = history.commit("refs/heads/main", f"progress {index}", main, {"progress.txt": f"step {index}\n"})
        branch = f"refs/heads/task-scale-{index:04d}"
        starts.append(main)
        if not kind.commits:
            history.reset(branch, main)
            continue
        files = {f"work/{index:04d}-{number}.txt": f"work {index} {number}\n" for number in range(kind.commits)}
        tip = main
        for file_name, text in files.items():
            tip = history.commit(branch, f"work {file_name}", tip, {file_name: text})
        if kind.merge == "ancestry":
            main = history.commit("refs/heads/main", f"Merge task-scale-{index:04d}", main, files, merge=tip)
        elif kind.merge in ("patch", "squash"):  # a rebase of one commit is its own patch; a squash, all in one
            main = history.commit("refs/heads/main", f"task-scale-{index:04d} (#{index})", main, files)
    marks_file = repository / ".git" / "bench-marks"
    subprocess.run(["git", "fast-import", "--quiet", f"--export-marks={marks_file}"], cwd=repository, check=True,
                   input="".join(history.lines), text=True, capture_output=True)
    commits = dict(line.split() for line in marks_file.read_text().splitlines())
    marks_file.unlink()
    git("reset", "-q", "--hard", "main", cwd=repository)
    return [
        Planted(kind, f"task-scale-{index:04d}", f"scale-{index:04d}",
                worktree_path(worktree_base, name, f"task-scale-{index:04d}"), commits[f":{start}"])
        for index, (kind, start) in enumerate(zip(kinds, starts))
    ]


async def add_worktrees(repository: Path, planted: list[Planted]) -> None:
    """A real `git worktree add` (a checkout) per environment; an untracked file in the dirty ones."""
    for environment in planted:
        process = await asyncio.create_subprocess_exec(
            "git", *IDENTITY, "worktree", "add", "-q", "--", str(environment.path), environment.branch,
            cwd=repository, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
        )
        _, error = await process.communicate()
        if process.returncode != 0:
            raise RuntimeError(f"git worktree add {environment.path}: {error.decode()}")
        if environment.kind.dirty:
            (environment.path / "notes.txt").write_text("not committed\n")


_INSERT_ENVIRONMENTS = """
INSERT INTO isolation_environments (id, codebase_id, workflow_type, workflow_id, working_path, branch_name,
                                    created_by_platform, metadata, status, created_at, destroyed_at)
SELECT id, codebase, 'task', workflow, path, branch, 'test', metadata::jsonb, status,
       now() - make_interval(days => age), CASE WHEN status = 'destroyed' THEN now() - interval '1 day' END
FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[])
     AS rows (id, codebase, workflow, path, branch, metadata, status, age)
"""
_INSERT_CONVERSATIONS = """
INSERT INTO conversations (platform, platform_conversation_id, codebase_id, environment_id, cwd,
                           created_at, last_activity_at, closed_at)
SELECT 'test', conversation, codebase, environment, cwd, now() - make_interval(days => days + 1),
       now() - make_interval(days => days), CASE WHEN closed THEN now() - make_interval(days => days) END
FROM unnest($1::text[], $2::uuid[], $3::uuid[], $4::text[], $5::int[], $6::bool[])
     AS rows (conversation, codebase, environment, cwd, days, closed)
"""


async def insert_planted(pool: asyncpg.Pool, codebase_id: str, planted: list[Planted]) -> None:
    """The rows the service would have: an active environment and its conversation for each."""
    async with pool.acquire() as connection, connection.transaction():
        await connection.execute(
            _INSERT_ENVIRONMENTS,
            [env.environment_id for env in planted], [codebase_id] * len(planted),
            [env.workflow_id for env in planted], [str(env.path) for env in planted],
            [env.branch for env in planted],
            [json.dumps({"start_commit": env.start, "bench": "scale"}) for env in planted],
            ["active"] * len(planted), [env.kind.days + 1 for env in planted],
        )
        await connection.execute(
            _INSERT_CONVERSATIONS,
            [f"scale:{codebase_id}:{env.workflow_id}" for env in planted], [codebase_id] * len(planted),
            [env.environment_id for env in planted], [str(env.path) for env in planted],
            [env.kind.days for env in planted], [env.kind.closed for env in planted],
        )


async def plant_codebases(stack: Stack, pool: asyncpg.Pool, folder: Path, names: list[str],
                          kinds_of: list[list[Kind]]) -> list[PlantedCodebase]:
    """Each repository planted, registered through the API, its worktrees added (two repositories
    at a time) and its rows inserted."""
    worktree_base = stack.trees / "worktrees"
    codebases: list[PlantedCodebase] = []
    for name, kinds in zip(names, kinds_of):
        repository = folder / name
        planted = plant_repository(repository, worktree_base, name, kinds)
        response = await stack.api.post("/api/codebases", json={"path": str(repository)})
        response.raise_for_status()
        registered = response.json()
        assert registered["name"] == name, registered
        codebases.append(PlantedCodebase(registered["id"], name, repository, planted))
    gate = asyncio.Semaphore(2)

    async def one(codebase: PlantedCodebase) -> None:
        async with gate:
            await add_worktrees(codebase.repository, codebase.planted)
            await insert_planted(pool, codebase.id, codebase.planted)

    await asyncio.gather(*(one(codebase) for codebase in codebases))
    async with pool.acquire() as connection:
        await connection.execute("ANALYZE isolation_environments; ANALYZE conversations")
    return codebases


class AttributingGit:
    """run_git itself, keeping each process's arguments and folder, to say afterwards whose it was."""

    def __init__(self) -> None:
        self.calls: list[tuple[tuple[str, ...], str | None]] = []

    async def __call__(self, *args: str, cwd: Path | str | None = None, check: bool = True) -> GitResult:
        self.calls.append((args, None if cwd is None else str(cwd)))
        return await run_git(*args, cwd=cwd, check=check)


@dataclass
class Classified:
    seconds: float
    environments: int
    candidates: int  # every environment the plan removes or keeps with a reason
    removed: int
    merged: int  # of the removed
    kept: int
    processes: int
    fixed: int  # the listing, the refs, the batch about every branch: the same whatever the count
    on_candidates: int
    on_others: int  # the processes the question is about: spent on environments that are no candidate
    others_by_kind: dict[str, int]
    kept_reasons: dict[str, int]


# The survey's questions about one branch; every other process it runs is about all of them at once.
PER_BRANCH = ("cherry", "merge-tree")


def _owner(args: tuple[str, ...], cwd: str | None, by_path: dict[str, Planted],
           by_tip: dict[str, list[Planted]]) -> list[Planted] | None:
    """The environments a survey's git process was about; None for those about the whole codebase."""
    if cwd in by_path:  # is the worktree dirty?
        return [by_path[cwd]]
    if args[0] in PER_BRANCH or (args[0] == "for-each-ref" and "--contains" in args):  # merged by patch? pushed?
        return [environment for arg in args for environment in by_tip.get(arg, [])] or None
    return None


async def classify_directly(stack: Stack, pool: asyncpg.Pool, codebases: list[PlantedCodebase]) -> Classified:
    """List, survey and plan each codebase in turn, as the cleanup's workflow calls them (its
    activities called here), with every git process counted and attributed."""
    settings = load_settings(database_url=stack.database_url, data_dir=stack.work / "data",
                             worktree_base_setting=stack.trees / "worktrees")
    counting = AttributingGit()
    environments = EnvironmentActivities(pool, settings)
    isolation = IsolationActivities(settings, build_providers(settings, counting))
    plans, surveys = [], []
    started = time.perf_counter()
    for codebase in codebases:
        listing = await environments.list_environments(EnvironmentsOfCodebase(codebase.id))
        ref: Codebase = listing.environments[0].ref.codebase
        survey = await isolation.survey_worktrees(SurveyInput(ref, tracked_worktrees(listing), ask_github=True,
                                                              plans_cleanup=True))
        plans.append(plan_cleanup(listing.environments, survey, KINDS,  # type: ignore[arg-type]
                                  listing.stale_threshold_days))
        surveys.append(survey)
    seconds = time.perf_counter() - started

    planted = [environment for codebase in codebases for environment in codebase.planted]
    by_path = {str(environment.path.resolve()): environment for environment in planted}
    by_tip: dict[str, list[Planted]] = {}
    for survey in surveys:
        for state in survey.states:
            if state.tip:
                by_tip.setdefault(state.tip, []).append(by_path[str(Path(state.working_path).resolve())])
    for codebase in codebases:  # main's own commit is in every survey's ref questions: no one environment's
        by_tip.pop(git("rev-parse", "main", cwd=codebase.repository), None)
    candidates = {candidate.environment.environment_id for plan in plans for candidate in plan.remove}
    kept_reasons: Counter[str] = Counter()
    branches_kept: set[tuple[str, str]] = set()
    for codebase, plan in zip(codebases, plans):
        for skipped in plan.skipped:
            branches_kept.add((codebase.name, skipped.branch))
            kept_reasons[skipped.reason] += 1
    for codebase in codebases:
        candidates |= {env.environment_id for env in codebase.planted if (codebase.name, env.branch) in branches_kept}
    fixed = on_candidates = on_others = 0
    others_by_kind: Counter[str] = Counter()
    for args, cwd in counting.calls:
        owners = _owner(args, cwd, by_path, by_tip)
        if owners is None:
            fixed += 1
        elif any(owner.environment_id in candidates for owner in owners):
            on_candidates += 1
        else:
            on_others += 1
            others_by_kind[owners[0].kind.name] += 1
    removed = sum(len(plan.remove) for plan in plans)
    merged = sum(candidate.why == "merged" for plan in plans for candidate in plan.remove)
    kept = sum(len(plan.skipped) for plan in plans)
    return Classified(seconds, len(planted), len(candidates), removed, merged, kept, len(counting.calls), fixed,
                      on_candidates, on_others, dict(others_by_kind), dict(kept_reasons))


async def classify_through_service(stack: Stack, codebases: list[PlantedCodebase]) -> tuple[float, list[float], int]:
    """One `/worktree cleanup merged --dry-run` per codebase, one after the other: the seconds in
    all, each one's milliseconds, and the merged worktrees they said would go."""
    for codebase in codebases:
        await say(stack, f"scale-admin-{codebase.name}", f"/clone {codebase.repository}")
    each, would_go = [], 0
    started = time.perf_counter()
    for codebase in codebases:
        result: dict = {}

        async def dry_run() -> None:
            nonlocal result
            result = await say(stack, f"scale-admin-{codebase.name}", "/worktree cleanup merged --dry-run")

        each.append(await timed(dry_run))
        text = "\n".join(result.get("replies", []))
        if "Would clean up " in text:
            would_go += int(text.split("Would clean up ", 1)[1].split(" ", 1)[0])
    return time.perf_counter() - started, each, would_go


async def classification(stack: Stack, trees: Path, codebases: int, per_codebase: int) -> list[Figure]:
    pool = await create_pool(stack.database_url, max_size=4)
    try:
        started = time.monotonic()
        names = [f"scale-{number:02d}" for number in range(codebases)]
        planted = await plant_codebases(stack, pool, trees / "repositories" / "scale", names,
                                        [mix(per_codebase, seed=number) for number in range(codebases)])
        print(f"    {codebases * per_codebase} environments planted in {time.monotonic() - started:.0f} s", flush=True)
        await classify_directly(stack, pool, planted[:2])  # warm: the OS's file cache, the pool
        direct = await classify_directly(stack, pool, planted)
        service_seconds, each, would_go = await classify_through_service(stack, planted)
    finally:
        await pool.close()
    expected_merged = direct.merged
    per_candidate = (direct.processes - direct.fixed) / max(direct.candidates, 1)
    each_figure = Latency.of(each)
    return [
        Figure(f"classification, {direct.environments} environments in {codebases} codebases (list, survey, plan)",
               f"{direct.seconds:.2f} s", f"target <= {CLASSIFICATION_SECONDS:.0f} s: "
               f"x{direct.seconds / CLASSIFICATION_SECONDS:.2f}; {direct.candidates} candidates: {direct.removed} "
               f"removed, {direct.kept} kept ({_reasons(direct.kept_reasons)})",
               verdict(direct.seconds <= CLASSIFICATION_SECONDS),
               {"seconds": round(direct.seconds, 2), "candidates": direct.candidates,
                "removed": direct.removed, "kept": direct.kept, "kept_reasons": direct.kept_reasons}),
        Figure(f"  through the service: {codebases} `/worktree cleanup merged --dry-run`", f"{service_seconds:.2f} s",
               f"x{service_seconds / CLASSIFICATION_SECONDS:.2f} of the target; each {each_figure}",
               data={"seconds": round(service_seconds, 2), "dry_runs": vars(each_figure)}),
        Figure("  git processes", f"{direct.processes} for {direct.candidates} candidates in "
               f"{direct.environments} environments",
               f"{direct.fixed} fixed ({direct.fixed // max(codebases, 1)} per codebase), "
               f"{direct.on_candidates} on candidates, {direct.on_others} on the others"
               + (f" ({_reasons(direct.others_by_kind)})" if direct.others_by_kind else "")
               + f"; {per_candidate:.2f} per candidate beyond the fixed",
               verdict(direct.on_others == 0),
               {"processes": direct.processes, "fixed": direct.fixed, "on_candidates": direct.on_candidates,
                "on_others": direct.on_others, "others_by_kind": direct.others_by_kind,
                "per_candidate": round(per_candidate, 2)}),
        Figure("  merged worktrees the dry runs would remove", str(would_go),
               f"the plans made directly: {expected_merged}", verdict(would_go == expected_merged)),
    ]


def _reasons(counts: dict[str, int]) -> str:
    return ", ".join(f"{count} {reason}" for reason, count in sorted(counts.items(), key=lambda item: -item[1]))


def _percentile(samples: list[float], cut: int) -> float:
    return round(statistics.quantiles(samples, n=100, method="inclusive")[cut - 1], 1)


async def status_at_scale(stack: Stack, trees: Path, environments: int, runs: int) -> list[Figure]:
    """`/status` from a conversation working in a codebase of `environments` environments: one made
    through the service (the conversation's own), the others planted."""
    pool = await create_pool(stack.database_url, max_size=4)
    try:
        name = "scale-status"
        [codebase] = await plant_codebases(stack, pool, trees / "repositories" / "scale-status", [name],
                                           [mix(environments - 1, seed=1000)])
    finally:
        await pool.close()
    conversation = "scale-status"
    await start_conversation(stack, conversation, codebase.repository)
    first = await say(stack, conversation, "/status")
    text = "\n".join(first["replies"])
    assert f"Worktrees: {environments}/" in text, text
    samples = [await timed(lambda: say(stack, conversation, "/status")) for _ in range(runs)]
    figure = Latency.of(samples)
    p95 = _percentile(samples, 95)
    counts = " ".join(line.strip() for line in text.splitlines() if line.strip().startswith(("•", "Disk")))
    return [
        Figure(f"/status, a codebase of {environments} environments", f"p50 {figure.p50:.1f} ms, p95 {p95:.1f} ms "
               f"(n={figure.samples})", f"target p50 <= {STATUS_P50_MS:.0f} ms: x{figure.p50 / STATUS_P50_MS:.2f}",
               verdict(figure.p50 <= STATUS_P50_MS), {"latency": vars(figure), "p95": p95, "reply": text}),
        Figure("  what it says", counts),
    ]


async def _insert_rows(pool: asyncpg.Pool, reuse_codebase: str, rows: int) -> None:
    """`rows` environment rows, each with its conversation: a tenth active, in ten codebases of another
    host; the rest destroyed, half of them in the measured conversation's own codebase."""
    async with pool.acquire() as connection, connection.transaction():
        others = [await connection.fetchval(
            """INSERT INTO codebases (name, canonical_path, default_branch, host)
               VALUES ($1, $2, 'main', 'bench-elsewhere') RETURNING id""",
            f"rows-{number}", f"/srv/rows-{number}") for number in range(10)]
        active = rows // 10
        ids = [str(uuid.uuid4()) for _ in range(rows)]
        codebase_ids = [others[index % 10] if index < active or index % 2 else reuse_codebase for index in range(rows)]
        await connection.execute(
            _INSERT_ENVIRONMENTS, ids, codebase_ids, [f"rows-{index}" for index in range(rows)],
            [f"/srv/worktrees/rows-{index}" for index in range(rows)],
            [f"task-rows-{index}" for index in range(rows)], [json.dumps({"bench": "rows"})] * rows,
            ["active" if index < active else "destroyed" for index in range(rows)],
            [index % 90 + 1 for index in range(rows)],
        )
        await connection.execute(
            _INSERT_CONVERSATIONS, [f"rows-{index}" for index in range(rows)], codebase_ids,
            [environment if index < active else None for index, environment in enumerate(ids)],
            [f"/srv/worktrees/rows-{index}" if index < active else None for index in range(rows)],
            [index % 90 for index in range(rows)], [False] * rows,
        )
        await connection.execute("ANALYZE isolation_environments; ANALYZE conversations; ANALYZE codebases")


async def _delete_rows(pool: asyncpg.Pool) -> None:
    async with pool.acquire() as connection:
        async with connection.transaction():
            await connection.execute("DELETE FROM conversations WHERE platform = 'test' "
                                     "AND platform_conversation_id LIKE 'rows-%'")
            await connection.execute("DELETE FROM isolation_environments WHERE metadata->>'bench' = 'rows'")
            await connection.execute("DELETE FROM codebases WHERE host = 'bench-elsewhere'")
        await connection.execute("VACUUM ANALYZE isolation_environments")
        await connection.execute("VACUUM ANALYZE conversations")
        await connection.execute("VACUUM ANALYZE codebases")


async def reuse_with_rows(stack: Stack, repository: Path, rows: int, runs: int) -> list[Figure]:
    """The reuse path's p50 with the database nearly empty and with `rows` more environment rows."""
    conversation = "reuse-rows"
    started = await start_conversation(stack, conversation, repository)
    pool = await create_pool(stack.database_url, max_size=2)
    try:
        codebase_id = await pool.fetchval("SELECT codebase_id FROM isolation_environments WHERE id = $1",
                                          started["environmentId"])
        before = await pool.fetchval("SELECT count(*) FROM isolation_environments")
        samples: dict[str, list[float]] = {"empty": [], "loaded": []}
        for _ in range(3):  # warm
            await say(stack, conversation)
        for phase in ("empty", "loaded", "loaded", "empty"):
            loaded = await pool.fetchval("SELECT count(*) > $1 FROM isolation_environments", before + rows // 2)
            if phase == "loaded" and not loaded:
                await _insert_rows(pool, codebase_id, rows)
            elif phase == "empty" and loaded:
                await _delete_rows(pool)
            for _ in range(3):  # the first messages after the change, not counted
                await say(stack, conversation)
            for _ in range(runs // 2):
                samples[phase].append(await timed(lambda: say(stack, conversation)))
        counted = await pool.fetchval("SELECT count(*) FROM isolation_environments")
    finally:
        await pool.close()
    empty, loaded = Latency.of(samples["empty"]), Latency.of(samples["loaded"])
    ratio = loaded.p50 / empty.p50
    return [
        Figure(f"reuse with {rows:,} more environment rows", str(loaded),
               f"{before} rows (nearly empty): {empty}", verdict(ratio <= ROWS_RATIO),
               {"loaded": vars(loaded), "empty": vars(empty), "ratio_p50": round(ratio, 3),
                "rows_before": before, "rows_at_the_end": counted}),
        Figure("  ratio (p50)", f"x{ratio:.3f} (target <= {ROWS_RATIO})"),
    ]
