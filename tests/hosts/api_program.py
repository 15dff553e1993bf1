"""The cluster's API process: `isolator api` as it ships (workers/api_process.py: its eager worker when
EAGER_START and ISOLATOR_HOST allow, its row in `service_processes`), on 127.0.0.1.

Run as `python -m tests.hosts.api_program --port N`, forked by tests/faults/forked.py."""

from __future__ import annotations

import argparse
import asyncio
import logging

from isolator.settings import load_settings
from workers.api_process import run_api


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    port = parser.parse_args().port
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    asyncio.run(run_api(load_settings(), "127.0.0.1", port))


if __name__ == "__main__":
    main()
