"""Installation tokens over a 500-message run (issue 48): at most one token request per installation per 55
minutes, whatever the number of messages.

Each message is a reply the service posts through its real deliverer (PyGithub, the App's credentials)
to the fake GitHub, which checks the App's JWT and gives tokens that live an hour. The messages go to
three repositories of three installations, one after another; a simulated clock moves 12 s a message, so
the run spans 100 minutes of tokens (two lifetimes) in a few seconds. The baseline, in the same run,
is the naive way: PyGithub's `AppInstallationAuth` made afresh for each message, a token each.

Run: .venv/bin/python -m bench.installation_tokens [MESSAGES]
"""

from __future__ import annotations

import asyncio
import math
import sys
import time

from github import Auth, Github, GithubIntegration
from pydantic import SecretStr

from activities.chat.platforms.github import make_deliverer
from activities.chat.platforms.github_app.credentials import credentials_of
from bench.figures import Figure, Latency, verdict
from isolator.contracts.message import ReplyInput
from isolator.settings import load_settings
from tests.fakes.github_api import FakeGitHub

REPOSITORIES = ["octo-org/one", "octo-org/two", "octo-org/three"]
SECONDS_A_MESSAGE = 12.0  # on the simulated clock: 500 messages span 100 minutes
WINDOW_MINUTES = 55


class SimulatedClock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


async def tokens(messages: int = 500) -> list[Figure]:
    fake = FakeGitHub()
    await fake.start()
    try:
        return await _run(fake, messages)
    finally:
        await fake.stop()


async def _run(fake: FakeGitHub, messages: int) -> list[Figure]:
    clock = SimulatedClock()
    fake.apps.clock = clock
    app = fake.apps.add_app("isolator-bench")
    installations = {name: fake.apps.install(app, name) for name in REPOSITORIES}
    for name in REPOSITORIES:
        fake.add_issue(name, 1)
    settings = load_settings(github_api_url=fake.api_url, github_app_id=app.app_id, database_url=None,
                             github_app_private_key=SecretStr(app.private_key), github_token=None,
                             isolator_secret_key=None)
    credentials_of(settings).clock = clock
    deliver = make_deliverer(settings)
    elapsed = []
    for index in range(messages):
        name = REPOSITORIES[index % len(REPOSITORIES)]
        started = time.perf_counter()
        await deliver(ReplyInput("github", f"{name}#1", f"message {index}", f"bench-{index}"))
        elapsed.append((time.perf_counter() - started) * 1000)
        clock.now += SECONDS_A_MESSAGE
        await asyncio.sleep(0)  # a renewal started in the background gets its turn, as between real messages
    await asyncio.sleep(0.5)
    span_minutes = messages * SECONDS_A_MESSAGE / 60
    allowed = math.ceil(span_minutes / WINDOW_MINUTES)
    counts = {name: fake.apps.requests_for(installation) for name, installation in installations.items()}
    naive = await asyncio.to_thread(_naive, fake, app.app_id, app.private_key, installations[REPOSITORIES[0]],
                                    min(messages, 50))
    latency = Latency.of(elapsed)
    figures = [
        Figure("installation tokens", f"{messages} messages over {span_minutes:.0f} simulated minutes, 3 installations: "
               f"{sum(counts.values())} token requests ({', '.join(str(count) for count in counts.values())})",
               f"naive: {naive} for {min(messages, 50)} messages; target <= {allowed} per installation "
               f"(1 per {WINDOW_MINUTES} min)", verdict(max(counts.values()) <= allowed),
               {"messages": messages, "requests": counts, "allowed_per_installation": allowed, "naive": naive}),
        Figure("reply as the App", str(latency), "no target", "", {"latency": vars(latency)}),
    ]
    return figures


def _naive(fake: FakeGitHub, app_id: int, key: str, installation: int, messages: int) -> int:
    """A client per message with its own AppInstallationAuth: the token requests that costs."""
    before = fake.apps.requests_for(installation)
    with GithubIntegration(auth=Auth.AppAuth(app_id, key), base_url=fake.api_url, retry=None) as integration:
        for index in range(messages):
            auth = Auth.AppAuth(app_id, key).get_installation_auth(installation, requester=integration.requester)
            with Github(base_url=fake.api_url, auth=auth, retry=None, lazy=True) as github:
                github.get_repo(REPOSITORIES[0]).get_issue(1).create_comment(f"naive {index}")
    return fake.apps.requests_for(installation) - before


def main() -> None:
    figures = asyncio.run(tokens(int(sys.argv[1]) if len(sys.argv) > 1 else 500))
    for figure in figures:
        print(f"{figure.case}: {figure.value} | {figure.baseline} {figure.verdict}")


if __name__ == "__main__":
    main()
