"""Where a run's work goes: delivered by the service, never by the agent.

`delivery.py` holds the activities (`push_results`, `open_pull_request`, `/pr`, a PR's state);
`commit_and_push.py` is their git side (the service's commit of what the agent left, the push of
the conversation's own branch with the service's credentials); `pull_requests.py` opens, comments
on and reads pull requests through PyGithub; `records.py` keeps the `pull_requests` rows.

May import: `activities/runs/`, `activities/chat/`, `activities/providers/`, `activities/git/`,
`isolator/`. Touch it to change what leaves the machine after a run: commits, pushes, pull requests.
"""
