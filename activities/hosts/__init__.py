"""Hosts and the service's processes: which are alive, what they hold, whether they agree.

`presence.py` is each process's own row in `service_processes` (migration 029): written at its start,
refreshed every PRESENCE_SECONDS, marked stopped at a clean exit; `liveness.py` reads the rows: a host's
liveness, and the hosts' view the API, the dashboard and the doctor show, with the processes whose
settings' fingerprint (isolator/fingerprint.py) differs; `agreement.py` says whether an API's settings
agree with the workers' (EAGER_START).

May import: `activities/database.py`, `isolator/`. Touch it to change what is known of a host or a
process, or when one counts as silent.
"""
