"""The doctor: `isolator doctor`, `GET /api/doctor` and the start of `isolator dev` check what is configured
before a message finds it broken. One module per concern (the chat platforms, the agent, this host's
sandbox and disks, the services the processes share), each check a small function that returns a
`Check`: what was checked, whether it is OK, and if not what is wrong and how to fix it. A check runs
only when its part is configured, and says which variable to change, never its value.
"""
