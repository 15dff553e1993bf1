"""`isolator worker` registers the search attributes a production server does not know yet."""

from __future__ import annotations

import uuid
from datetime import timedelta

from google.protobuf.duration_pb2 import Duration
from temporalio.api.operatorservice.v1 import ListSearchAttributesRequest
from temporalio.api.workflowservice.v1 import RegisterNamespaceRequest
from temporalio.client import Client

from isolator.contracts import search_attributes
from workers.processes import ensure_search_attributes
from workers.temporal_server import TemporalDevServer


async def test_missing_search_attributes_are_registered_once(temporal_server: TemporalDevServer) -> None:
    namespace = f"fresh-{uuid.uuid4().hex[:8]}"
    client = await Client.connect(temporal_server.address)
    retention = Duration()
    retention.FromTimedelta(timedelta(days=1))
    await client.workflow_service.register_namespace(
        RegisterNamespaceRequest(namespace=namespace, workflow_execution_retention_period=retention)
    )
    listing = ListSearchAttributesRequest(namespace=namespace)
    before = await client.operator_service.list_search_attributes(listing)
    assert not any(key.name in before.custom_attributes for key in search_attributes.ALL)

    await ensure_search_attributes(client, namespace)
    await ensure_search_attributes(client, namespace)  # the second start finds them and adds nothing

    after = await client.operator_service.list_search_attributes(listing)
    assert all(key.name in after.custom_attributes for key in search_attributes.ALL)
