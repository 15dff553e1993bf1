"""What to send instead: a short hint added to each problem of a 422, read from the route's own parameters
and body model, so a caller learns the expected fields without opening the docs."""

from __future__ import annotations

import types
import uuid
from typing import Any, Literal, Union, get_args, get_origin

from fastapi.routing import APIRoute
from pydantic import BaseModel

_PLACES = {"query": "query string", "path": "path", "header": "headers", "cookie": "cookies"}


def request_hint(route: object, location: tuple[Any, ...]) -> str | None:
    """What the route takes where the problem is (`("body", "message")`, `("query", "status")`); None when
    the route is unknown or says nothing about that place."""
    if not isinstance(route, APIRoute) or not location:
        return None
    place = location[0]
    if place == "body":
        return _body_hint(route)
    if place in _PLACES and len(location) > 1:
        return _parameter_hint(route, place, str(location[1]))
    return None


def _body_hint(route: APIRoute) -> str | None:
    if route.body_field is None:
        return None
    model = route.body_field.field_info.annotation
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return None
    required = [_name(name, field.alias) for name, field in model.model_fields.items() if field.is_required()]
    optional = [_name(name, field.alias) for name, field in model.model_fields.items() if not field.is_required()]
    if not required:
        return "send a JSON object with any of " + ", ".join(optional)
    return "send a JSON object with " + ", ".join(required) + (f" (and optionally {', '.join(optional)})"
                                                               if optional else "")


def _parameter_hint(route: APIRoute, place: str, name: str) -> str | None:
    dependant = route.dependant
    parameters = {"query": dependant.query_params, "path": dependant.path_params,
                  "header": dependant.header_params, "cookie": dependant.cookie_params}[place]
    parameter = next((p for p in parameters if p.alias == name), None)
    if parameter is None:
        return None
    wanted = parameter.field_info.description or _kind(parameter.field_info.annotation)
    return f"`{name}` in the {_PLACES[place]}: {wanted}"


def _name(name: str, alias: str | None) -> str:
    return f"`{alias or name}`"


def _kind(annotation: Any) -> str:
    """A parameter's type in words: `one of `a`, `b``, `an id (UUID)`, `true or false`."""
    if get_origin(annotation) in (Union, types.UnionType):  # Optional[X]: X, since the problem is its value
        annotation = next((arg for arg in get_args(annotation) if arg is not type(None)), annotation)
    if get_origin(annotation) is Literal:
        return "one of " + ", ".join(f"`{value}`" for value in get_args(annotation))
    words = {uuid.UUID: "an id (a UUID)", bool: "`true` or `false`", int: "a whole number", str: "text"}
    return words.get(annotation, getattr(annotation, "__name__", str(annotation)))
