"""The sandbox: where every user program (the coding agent, the repository's set-up and teardown) runs.

`bubblewrap.py` builds the bubblewrap command line and checks once at start that it works;
`git_view.py` gives a run its own view of the repository and takes its branch back afterwards;
`user_programs.py` runs a program there (own process group, bounded time and output, none of our
secrets); `processes.py` and `stops.py` watch and stop what it started.

May import: `isolator/` only; whatever runs a user's program imports it. Touch it to change what a
program can see, write or reach, or how it is started and stopped; nothing here knows about agents,
chats or records.
"""
