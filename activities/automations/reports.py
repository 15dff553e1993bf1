"""What a firing says in its report place when it ends: one message, the answer folded when long."""

from __future__ import annotations

from isolator.contracts.automation import FiringEnd

# Characters of the agent's answer quoted in the report; the rest is on the run's dashboard page.
FOLD_AT = 1500


def folded(answer: str) -> str:
    answer = answer.strip()
    if len(answer) <= FOLD_AT:
        return answer
    cut = answer.rfind("\n", FOLD_AT // 2, FOLD_AT)
    return answer[:cut if cut != -1 else FOLD_AT].rstrip() + "\n[… the rest is on the run's page]"


def report_text(name: str, end: FiringEnd, results: str, paused: bool) -> str:
    cost = f" (${end.cost_usd:.2f})" if end.cost_usd else ""
    if end.state == "nothing":
        return f"Automation `{name}`: nothing to do this time{cost}."
    if end.state in ("failed", "refused"):
        line = f"Automation `{name}` did not finish: {end.summary}{cost}."
        if paused:
            line += (f"\nIt failed 3 times in a row and is paused: `/automation resume {name}` (or the dashboard) "
                     "starts it again.")
        return line
    parts = [f"Automation `{name}` finished{cost}."]
    if end.pull_request_url:
        parts.append(f"PR: {end.pull_request_url}")
    elif results == "pr":
        parts.append(end.summary or "Nothing was pushed.")
    if end.summary and results == "report":
        parts.append(folded(end.summary))
    return "\n".join(parts)
