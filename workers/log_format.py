"""How the processes log (LOG_FORMAT, docs/observability.md "Logs"): text lines, or one JSON object per
line with the time, level, logger and message, and what is known of the step that logged it: the
workflow and its run, the conversation, environment, agent run and codebase, the trace, and for an
activity the host and task queue it ran on (routing is read from the logs, not from histories).

Every normal activity logs one line at its end (StepLines), so that which host ran which step is in
the log at INFO; the ids of a step are read from its input (the dataclasses of isolator/contracts).
"""

from __future__ import annotations

import contextvars
import dataclasses
import json
import logging
import sys
import time
from datetime import datetime, timezone
from typing import Any, Literal

from temporalio import activity, workflow
from temporalio.worker import ActivityInboundInterceptor, ExecuteActivityInput, Interceptor

from isolator import tracing

# The fields a line may carry, in the order a text line or a JSON object shows them.
FIELDS = ("workflow_id", "workflow_run_id", "activity", "conversation", "environment_id", "run_id", "codebase_id",
          "trace_id", "host", "task_queue")
_IDS = ("conversation", "environment_id", "run_id", "codebase_id")
_TEXT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_steps_ids: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar("isolator_step_ids", default=None)
steps_log = logging.getLogger("isolator.steps")


def configure_logging(log_format: Literal["text", "json"], level: int, host: str) -> None:
    """The root logger's one handler, to standard error, in `log_format`; replaces basicConfig."""
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(StepFields(host))
    handler.setFormatter(JsonLines() if log_format == "json" else TextLines(_TEXT))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    # The SDK's loggers append a dict of the step to the message; StepFields carries it instead, as fields.
    activity.logger.activity_info_on_message = False
    workflow.logger.workflow_info_on_message = False


class StepFields(logging.Filter):
    """Adds `step` to each record: what is known of the activity or workflow that logs it."""

    def __init__(self, host: str) -> None:
        super().__init__()
        self.host = host

    def filter(self, record: logging.LogRecord) -> bool:
        record.step = step_fields(self.host)
        return True


def step_fields(host: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    if activity.in_activity():
        info = activity.info()
        fields.update(workflow_id=info.workflow_id or "", workflow_run_id=info.workflow_run_id or "",
                      activity=info.activity_type, host=host, task_queue=info.task_queue)
    elif workflow.in_workflow():
        winfo = workflow.info()
        fields.update(workflow_id=winfo.workflow_id, workflow_run_id=winfo.run_id, task_queue=winfo.task_queue)
        kind, _, rest = winfo.workflow_id.partition(":")
        if kind == "environment":
            fields["environment_id"] = rest
    fields.update(_steps_ids.get() or {})
    trace_id = tracing.current_trace_id()
    if trace_id:
        fields["trace_id"] = trace_id
    return {name: value for name, value in fields.items() if value}


class TextLines(logging.Formatter):
    """The usual line; an activity's names its host and queue, and its workflow, at the end."""

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        step: dict[str, str] = getattr(record, "step", {})
        if "host" not in step:
            return line
        said = f"host={step['host']} queue={step['task_queue']} workflow={step.get('workflow_id', '-')}"
        head, newline, rest = line.partition("\n")  # after the message, before a traceback
        return f"{head} [{said}]{newline}{rest}"


class JsonLines(logging.Formatter):
    """One JSON object per line; a traceback is a field of it."""

    def format(self, record: logging.LogRecord) -> str:
        moment = datetime.fromtimestamp(record.created, timezone.utc)
        line: dict[str, Any] = {"time": moment.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                                "level": record.levelname, "logger": record.name, "message": record.getMessage()}
        step: dict[str, str] = getattr(record, "step", {})
        line.update((name, step[name]) for name in FIELDS if name in step)
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        elif record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return json.dumps(line, ensure_ascii=False, default=str)


class StepLines(Interceptor):
    """Each activity's ids for its log lines, and a line at the end of each normal one."""

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _StepLines(next)


class _StepLines(ActivityInboundInterceptor):
    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        token = _steps_ids.set(ids_in(input.args[0]) if input.args else None)
        started = time.monotonic()
        local = activity.info().is_local  # many and quick, on the workflow's own worker: not a line each
        try:
            result = await self.next.execute_activity(input)
        except BaseException as error:
            if not local:
                steps_log.info("%s ended after %.0f ms: %s", activity.info().activity_type,
                               (time.monotonic() - started) * 1000, type(error).__name__)
            raise
        else:
            if not local:
                steps_log.info("%s ran in %.0f ms", activity.info().activity_type, (time.monotonic() - started) * 1000)
            return result
        finally:
            _steps_ids.reset(token)


def ids_in(argument: object, depth: int = 0) -> dict[str, str]:
    """The conversation, environment, run and codebase an activity's input names, at any of its
    first levels (a PushRequest's environment's codebase)."""
    if not dataclasses.is_dataclass(argument) or isinstance(argument, type) or depth > 2:
        return {}
    found: dict[str, str] = {}
    values = {field.name: getattr(argument, field.name, None) for field in dataclasses.fields(argument)}
    if isinstance(values.get("platform"), str) and isinstance(values.get("conversation_id"), str):
        found["conversation"] = f"{values['platform']}:{values['conversation_id']}"
    if type(argument).__name__ == "Codebase" and isinstance(values.get("id"), str):
        found["codebase_id"] = values["id"]
    for name, value in values.items():
        if name in _IDS and isinstance(value, str) and value:
            found.setdefault(name, value)
        elif dataclasses.is_dataclass(value):
            for key, inner in ids_in(value, depth + 1).items():
                found.setdefault(key, inner)
    return found
