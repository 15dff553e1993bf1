"""Automations (docs/automations.md): the agent works on a schedule or an event, with no one typing.

`records.py` keeps the definitions and their firings in PostgreSQL; `schedules.py` keeps one Temporal
Schedule per scheduled automation in step with its definition; `firings.py` holds the firing's steps
(decide, wait for its run, report); `reports.py` says a firing's end in its report place;
`repository.py` reads a repository's own `[[automations]]` on its host and makes the rows match.
`commands.py` answers chat's `/automation …` (its words in `command_texts.py`) and names the
automations reporting in a conversation, for its `/status`.

May import: `activities/results/`, `activities/providers/` (the committed `.isolator.toml`), `activities/runs/`, `activities/chat/`, `activities/database.py`,
`isolator/`. Touch it to change what an automation does when it fires.
"""
