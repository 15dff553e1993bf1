"""The data converter of every Temporal client and worker of the service.

The SDK's JSON converter decodes a dataclass by asking `typing.get_type_hints` for its fields every
time; with postponed annotations that evaluates each annotation string again, which made decoding
most of the cost of a payload. This converter keeps each dataclass's field types once and leaves
everything else (and all encoding) to the SDK, so what is written is exactly what the SDK writes.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, get_type_hints

from temporalio.client import Client
from temporalio.converter import (
    AdvancedJSONEncoder,
    CompositePayloadConverter,
    DataConverter,
    DefaultPayloadConverter,
    JSONPlainPayloadConverter,
    JSONTypeConverter,
    value_to_type,
)

from isolator import tracing


@functools.cache
def _field_types(cls: type) -> tuple[tuple[str, Any, bool], ...]:
    """(name, type, passed to __init__) of each field of a dataclass."""
    hints = get_type_hints(cls)
    return tuple((field.name, hints[field.name], field.init) for field in dataclasses.fields(cls))


class DataclassFields(JSONTypeConverter):
    """Decodes dataclasses as the SDK does, from field types looked up once per class."""

    def to_typed_value(self, hint: type, value: Any) -> Any:
        if not (isinstance(hint, type) and dataclasses.is_dataclass(hint)):
            return JSONTypeConverter.Unhandled
        if not isinstance(value, dict):
            raise TypeError(f"Cannot convert to dataclass {hint}, value is {type(value)} not dict")
        arguments, later = {}, {}
        for name, field_type, in_init in _field_types(hint):
            if name not in value:
                continue  # a missing required field fails the constructor, as in the SDK
            try:
                converted = value_to_type(field_type, value[name], _CONVERTERS)
            except Exception as error:
                raise TypeError(f"Failed converting field {name} on dataclass {hint}") from error
            (arguments if in_init else later)[name] = converted
        decoded = hint(**arguments)
        for name, converted in later.items():
            object.__setattr__(decoded, name, converted)
        return decoded


_CONVERTERS = [DataclassFields()]


class _PayloadConverter(CompositePayloadConverter):
    def __init__(self) -> None:
        json_plain = JSONPlainPayloadConverter(encoder=AdvancedJSONEncoder, custom_type_converters=_CONVERTERS)
        super().__init__(*(json_plain if isinstance(converter, JSONPlainPayloadConverter) else converter
                           for converter in DefaultPayloadConverter.default_encoding_payload_converters))


DATA_CONVERTER = dataclasses.replace(DataConverter.default, payload_converter_class=_PayloadConverter)


async def connect(address: str, namespace: str = "default") -> Client:
    """A Temporal client of the service: every process connects through here, with DATA_CONVERTER."""
    return await Client.connect(address, namespace=namespace, data_converter=DATA_CONVERTER,
                                interceptors=tracing.client_interceptors())
