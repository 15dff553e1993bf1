# The image of `isolator migrate`, `isolator worker` and `isolator api` (docker-compose.yml).
# Everything is installed at build time; the container downloads nothing when it runs.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# git for the worktrees; ssh for ssh:// and user@host:path clone URLs; bubblewrap for the sandbox
# every user program (agent, set-up, teardown) runs in (docs/sandbox.md).
RUN apt-get update \
    && apt-get install -y --no-install-recommends git openssh-client ca-certificates bubblewrap \
    && rm -rf /var/lib/apt/lists/*

# A fixed uid, so files in the `code` volume keep one owner across rebuilds and hosts. /code exists
# in the image, owned by that user, so a fresh named volume mounted there starts out writable.
RUN groupadd --system --gid 10001 isolator \
    && useradd --system --uid 10001 --gid isolator --create-home --home-dir /home/isolator \
       --shell /usr/sbin/nologin isolator \
    && mkdir -p /code \
    && chown isolator:isolator /code

WORKDIR /src
# pyproject.toml names README.md as the package's readme: the build needs it.
COPY pyproject.toml README.md ./
COPY isolator isolator
COPY api api
COPY workflows workflows
COPY activities activities
COPY workers workers
COPY migrations migrations
RUN pip install . && rm -rf /src

USER isolator
WORKDIR /home/isolator
ENTRYPOINT ["isolator"]
CMD ["--help"]
