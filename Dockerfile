# The image for `isolator api`, `isolator worker` and `isolator migrate` (docker-compose.yml).
FROM python:3.11-slim
RUN apt-get update && apt-get install -y --no-install-recommends git openssh-client \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml ./
COPY isolator isolator
COPY api api
COPY workflows workflows
COPY activities activities
COPY workers workers
COPY migrations migrations
RUN pip install --no-cache-dir .
ENTRYPOINT ["isolator"]
