"""Running the user's programs (set-up and teardown commands, the coding agent) on their behalf.

Each runs in a process group of its own, within a time limit, with its output handed on in bounded
chunks, and with none of the service's secrets in its environment. On a timeout or a stop (the
activity cancelled) the group gets SIGTERM, then SIGKILL after a grace period; whatever the program
left running in its group is ended with it, so nothing of a step outlives the step.

Each runs in the sandbox (bubblewrap.py), within a run's limits (limits.py): it sees its worktree, the
`writable_paths` it is given and a read-only system; what it commits reaches its branch once it ended.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import signal
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import SecretStr

from activities.sandbox import bubblewrap, limits
from activities.sandbox.git_view import BranchNotTaken, GitView, take_back
from activities.sandbox.processes import Watch
from activities.sandbox.stops import Stop, signal_group
from isolator import tracing
from isolator.settings import Settings

log = logging.getLogger(__name__)

OUTPUT_AFTER_EXIT_SECONDS = 2.0
TAIL_LINES = 20
MAX_LINE = 2000  # characters kept of one line; a program that never prints a newline is cut here
CHUNK = 1 << 16  # read at most this much at once: memory stays bounded whatever a program prints
# The set-up step a repository with submodules gets first.
SUBMODULES = "git submodule update --init --recursive"

# Variables the service holds for itself: its database, its API token, every webhook secret and bot token.
SECRETS = frozenset(
    {"DATABASE_URL", "PGPASSWORD"}
    | {str(field.validation_alias.choices[0])  # type: ignore[union-attr]
       for field in Settings.model_fields.values() if field.annotation in (SecretStr, SecretStr | None)}
)


def user_environment(extra: dict[str, str]) -> dict[str, str]:
    """The worker's environment without the service's secrets, plus `extra` (ISOLATOR_* and ports)."""
    return {**{name: value for name, value in os.environ.items() if name not in SECRETS}, **extra}


class CannotStart(Exception):
    """The program could not be started (missing, not executable); the message says why."""


@dataclass
class Finished:
    exit_code: int | None  # None when it was stopped (at the time limit, or at a limit of a run's)
    timed_out: bool
    seconds: float
    limit: str | None = None  # the limit it was stopped at: "it used all of its 4,096 MiB of memory (…)"


OnChunk = Callable[[bytes], Awaitable[None]]
# Writes a program's standard input for as long as it converses with it (then the input is closed).
Feed = Callable[[asyncio.StreamWriter], Awaitable[None]]


async def run_user_program(
    argv: list[str], cwd: Path, env: dict[str, str], timeout_seconds: float, *,
    on_output: OnChunk, on_error: OnChunk | None = None, stdin: bytes | Feed | None = None,
    on_start: Callable[[int], None] | None = None, writable_paths: Sequence[Path] = (),
    readable_paths: Sequence[Path] = (), config_files: Mapping[Path, Path] | None = None,
    after: Awaitable[object] | None = None, span: str = "user program",
) -> Finished:
    """Run `argv` in the sandbox with `stdin` written and closed (or, a Feed, written by it as long as it
    likes: a conversation with the program); standard output (and standard
    error, unless `on_error` takes it) is handed to `on_output` chunk by chunk as it arrives; a slow
    handler slows the program down rather than filling memory. `on_start` gets the process group id.
    `writable_paths`: folders outside the worktree it may write (a session folder); `readable_paths`
    and `config_files`: what its program and the operator's configuration add to its view (bubblewrap.py).
    `after`: the program starts only once it is done; the sandbox is made meanwhile (when it
    raises, the program never starts and the error is raised here). `span`: its name in the trace."""
    started = time.monotonic()
    _check_program(argv[0], cwd, env)  # inside the sandbox, only bubblewrap could say so, less clearly
    try:
        async with bubblewrap.sandboxed_run(argv, cwd, env, writable_paths, readable_paths, config_files) as run, \
                limits.for_run() as limited, tracing.async_span(span, program=Path(argv[0]).name):
            try:
                finished = await _run(run.argv, cwd, run.env, timeout_seconds, on_output, on_error, stdin,
                                      on_start, limited, spare_leader=run.sandboxed, after=after)
            finally:  # a stopped run's commits count too
                if run.git is not None:
                    await asyncio.shield(_take_back(run.git))
    except (bubblewrap.SandboxRefused, limits.CannotLimit) as error:
        raise CannotStart(str(error)) from None
    finished.seconds = time.monotonic() - started
    return finished


def _check_program(program: str, cwd: Path, env: dict[str, str]) -> None:
    path = cwd / program if "/" in program else shutil.which(program, mode=os.F_OK, path=env.get("PATH", os.defpath))
    if path is None or not Path(path).is_file():
        raise CannotStart(f"`{program}` was not found")
    if not os.access(path, os.X_OK):
        raise CannotStart(f"`{program}` is not executable")


async def _take_back(git: GitView) -> None:
    try:
        await take_back(git)
    except (BranchNotTaken, OSError) as error:
        log.warning("the commits of a sandboxed run in %s stay out of `%s`: %s", git.worktree, git.branch, error)


async def _run(
    argv: list[str], cwd: Path, env: dict[str, str], timeout_seconds: float, on_output: OnChunk,
    on_error: OnChunk | None, stdin: bytes | Feed | None, on_start: Callable[[int], None] | None,
    limited: limits.RunLimits, spare_leader: bool, after: Awaitable[object] | None = None,
) -> Finished:
    started = time.monotonic()
    watch = Watch(argv, gated=after is not None) if spare_leader else None
    if after is not None and watch is None:  # unconfined, nothing holds the program: it starts after
        await after
    try:
        process = await _start(limited.wrap(watch.argv if watch else argv), cwd, env, stdin, on_error,
                               watch.pass_fds if watch else ())
    except BaseException:
        if watch:
            watch.close()
        raise
    finally:
        if watch:
            watch.started()
    if on_start is not None:
        on_start(process.pid)
    if watch is not None and after is not None:
        await _when_done(after, process, watch)
    stop = Stop(process, watch)
    # A conversation lasts as long as the program: it is not output to wait for once the program exited.
    conversing = asyncio.ensure_future(_feed(process, stdin)) if stdin is not None and not isinstance(stdin, bytes) \
        else None
    try:
        readers = [_pump(process.stdout, on_output)]
        if on_error is not None:
            readers.append(_pump(process.stderr, on_error))
        if isinstance(stdin, bytes):
            readers.append(_feed(process, stdin))
        exit_code, limit = await asyncio.wait_for(limited.enforce(_exit_and_output(process, readers, stop)), timeout_seconds)
        timed_out = False
    except TimeoutError:
        exit_code, timed_out, limit = None, True, None
    finally:
        await stop()  # also what it left behind in its group after it exited
        if conversing is not None:
            conversing.cancel()
            await asyncio.gather(conversing, return_exceptions=True)
        if watch:
            watch.close()
    if limit is not None and on_error is not None:  # its log, kept apart (an agent's), ends with the service's line
        await on_error(f"isolator: stopped: {limit}\n".encode())
    return Finished(exit_code, timed_out, time.monotonic() - started, limit=limit)


async def _start(argv: list[str], cwd: Path, env: dict[str, str], stdin: bytes | Feed | None, on_error: OnChunk | None,
                 pass_fds: tuple[int, ...]) -> asyncio.subprocess.Process:
    """The process, in a new group. Stopped while it is being made, it is made, then its whole group
    killed: asyncio alone would kill its first process only (bubblewrap), then wait forever on the
    output pipes that the sandbox's held program still holds."""
    making = asyncio.ensure_future(_create(argv, cwd, env, stdin, on_error, pass_fds))
    try:
        return await asyncio.shield(making)
    except asyncio.CancelledError:
        try:
            process = await making
        except CannotStart:
            raise asyncio.CancelledError from None
        signal_group(process.pid, signal.SIGKILL)
        raise


async def _create(argv: list[str], cwd: Path, env: dict[str, str], stdin: bytes | Feed | None, on_error: OnChunk | None,
                  pass_fds: tuple[int, ...]) -> asyncio.subprocess.Process:
    try:
        return await asyncio.create_subprocess_exec(
            *argv, cwd=cwd, env=env, start_new_session=True, pass_fds=pass_fds,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE if on_error is not None else asyncio.subprocess.STDOUT,
        )
    except FileNotFoundError:
        raise CannotStart(f"`{argv[0]}` was not found") from None
    except PermissionError:
        raise CannotStart(f"`{argv[0]}` is not executable") from None
    except OSError as error:
        raise CannotStart(f"`{argv[0]}` could not be started: {error.strerror or error}") from None


async def _when_done(after: Awaitable[object], process: asyncio.subprocess.Process, watch: Watch) -> None:
    """Lets the held program start once `after` is done; when it raises (or the run is stopped),
    the sandbox, in which nothing of the program ran yet, is ended at once."""
    try:
        await after
    except BaseException:
        signal_group(process.pid, signal.SIGKILL)
        await process.wait()
        await watch.ended(process.pid)
        watch.close()
        raise
    watch.open_gate()


async def _exit_and_output(process: asyncio.subprocess.Process, readers: list[Awaitable[None]],
                           stop: Stop) -> int:
    """The exit code, once its output is read; a child it left behind holding the pipes open gets
    OUTPUT_AFTER_EXIT_SECONDS to finish writing, then the group is stopped."""
    output = asyncio.ensure_future(asyncio.gather(*readers))
    exited = asyncio.ensure_future(process.wait())
    try:
        await asyncio.wait([exited, output], return_when=asyncio.FIRST_COMPLETED)
        if output.done() and not output.cancelled() and output.exception() is not None:
            await stop()  # a handler of its output gave up on it (a budget passed, an agent retrying for minutes)
            output.result()
        exit_code = await exited
        await asyncio.wait_for(asyncio.shield(output), OUTPUT_AFTER_EXIT_SECONDS)
    except TimeoutError:
        await stop()
        await output
    finally:
        for pending in (output, exited):
            if not pending.done():
                pending.cancel()
                await asyncio.gather(pending, return_exceptions=True)
    return exit_code


async def _pump(stream: asyncio.StreamReader | None, handle: OnChunk) -> None:
    assert stream is not None
    while chunk := await stream.read(CHUNK):
        await handle(chunk)
        # A read of what is already buffered returns without yielding: a program that prints without a
        # pause would hold the event loop, and the run's liveness heartbeats with it (workers/heartbeats.py).
        await asyncio.sleep(0)


async def _feed(process: asyncio.subprocess.Process, data: bytes | Feed) -> None:
    assert process.stdin is not None
    try:
        if isinstance(data, bytes):
            process.stdin.write(data)
            await process.stdin.drain()
        else:
            await data(process.stdin)
    except (BrokenPipeError, ConnectionResetError):  # it did not read its input: its business
        pass
    finally:
        process.stdin.close()
