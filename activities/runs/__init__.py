"""An agent run, from the message queued to its record: everything between "the environment's
workflow hands a message to the agent" and "the run's answer, cost and outcome are kept".

`queue.py` hands a message to its environment's queue and stops runs; `run_agent.py` is the run
activity itself; `agents/` holds one driver per coding agent (Claude Code, Codex, Aider, any
program) behind the interface of `agents/base.py`; `sessions.py` and `session_commands.py` keep
each conversation's agent session; `answer.py`, `verbosity.py`, `output.py` and `outcome.py` turn
what the agent prints into the conversation's messages and closing line; `records.py` keeps the
`agent_runs` rows; `processes.py` finds what a dead worker left running; `team_runs.py` records a
team's own agent workflow.

May import: `activities/sandbox/`, `activities/git/`, `activities/chat/` (to reply),
`activities/environments/` (the set-up's variables), `isolator/`.
Touch it to change how an agent is started, read, resumed or recorded; a new agent is one module in
`agents/`.
"""
