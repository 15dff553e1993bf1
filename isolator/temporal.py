"""Connecting to Temporal: every client and worker of the service converts payloads the same way."""

from __future__ import annotations

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter

# The payloads stay plain JSON. Pydantic validates the dataclasses that workflows and activities
# exchange with an adapter built once per type; the SDK's default converter reads their type hints
# again for every payload (about 0.5 ms to decode one Conversation, ten times pydantic's cost).
DATA_CONVERTER = pydantic_data_converter


async def connect(address: str, namespace: str = "default") -> Client:
    return await Client.connect(address, namespace=namespace, data_converter=DATA_CONVERTER)
