"""Dotted paths into JSON responses: ``results[].metadata.parent_id``.

``[]`` marks the list of hits (once per path; ``[].id`` when the response itself is the list); the part after it is
read from each hit. A number indexes a list (``data.0.hits[].id``). Errors name the path and what was found instead.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import ExternalRetrieverError


@dataclass(frozen=True)
class HitPath:
    text: str
    to_list: tuple[str, ...]  # from the response to the list of hits
    in_hit: tuple[str, ...]  # from one hit to the value

    @classmethod
    def parse(cls, text: str, field: str) -> "HitPath":
        head, sep, tail = text.partition("[]")
        to_list = head.split(".") if head else []
        in_hit = tail[1:].split(".") if tail.startswith(".") else []
        if not sep or "[]" in tail or not in_hit or not all(in_hit) or not all(to_list):
            raise ExternalRetrieverError(
                f"mapping field '{field}': path {text!r} must mark the list of hits once with [] and name a value "
                "after it, e.g. 'results[].id'")
        return cls(text, tuple(to_list), tuple(in_hit))


def step(value, key: str, path: str, where: str):
    """value[key] for a dict, value[int(key)] for a list; an error naming the path otherwise."""
    if isinstance(value, dict):
        if key in value:
            return value[key]
        keys = ", ".join(map(str, list(value)[:10])) or "none"
        raise ExternalRetrieverError(f"{where}: path {path!r}: no key {key!r} (keys: {keys})")
    if isinstance(value, list) and key.lstrip("-").isdigit():
        if -len(value) <= int(key) < len(value):
            return value[int(key)]
        raise ExternalRetrieverError(f"{where}: path {path!r}: index {key} is out of range (length {len(value)})")
    raise ExternalRetrieverError(f"{where}: path {path!r}: expected an object at {key!r}, found {type(value).__name__}")


def follow(value, steps, path: str, where: str):
    for key in steps:
        value = step(value, key, path, where)
    return value


def hit_list(response, path: HitPath, where: str) -> list:
    found = follow(response, path.to_list, path.text, where)
    if not isinstance(found, list):
        shown = ".".join(path.to_list) or "the response"
        raise ExternalRetrieverError(f"{where}: path {path.text!r}: {shown} is a {type(found).__name__}, not a list")
    return found
