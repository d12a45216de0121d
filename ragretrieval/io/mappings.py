"""Settings files people write by hand, in TOML or YAML (sweep grids, ``--config`` files): read into a mapping with
errors that name the file and, from the parser, the line; written back in either format."""

from __future__ import annotations

from pathlib import Path

from ..errors import RagretrievalError

SUFFIXES = {".toml": "toml", ".yaml": "yaml", ".yml": "yaml"}


class MappingFileError(RagretrievalError, ValueError):
    """A settings file that cannot be read, or is not a mapping of settings."""


def file_format(path: Path, what: str) -> str:
    try:
        return SUFFIXES[path.suffix.lower()]
    except KeyError:
        raise MappingFileError(f"{path}: a {what} ends in .toml, .yaml or .yml") from None


def read_mapping(path, what: str = "settings file") -> dict:
    """The mapping a TOML or YAML file holds (the suffix says which)."""
    path = Path(path)
    kind = file_format(path, what)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise MappingFileError(f"{path}: cannot read the {what}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise MappingFileError(f"{path}: the {what} is not UTF-8 text") from None
    try:
        if kind == "yaml":
            import yaml

            data = yaml.safe_load(text) or {}
        else:
            try:
                import tomllib
            except ImportError:  # Python 3.10
                import tomli as tomllib
            data = tomllib.loads(text)
    except Exception as error:  # the YAML and TOML parsers raise their own kinds, with line numbers
        raise MappingFileError(f"{path}: not valid {kind.upper()}: {error}") from None
    if not isinstance(data, dict):
        raise MappingFileError(f"{path}: a {what} holds a mapping of settings, not {type(data).__name__}")
    return data


def _without_nulls(value):
    """TOML has no null: a setting left unset is left out (the settings model fills in its default)."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def dump_mapping(values: dict, kind: str = "toml") -> str:
    """`values` as TOML (unset values left out) or YAML text."""
    if kind == "yaml":
        import yaml

        return yaml.safe_dump(values, allow_unicode=True, sort_keys=False)
    if kind != "toml":
        raise MappingFileError(f"format must be toml or yaml; got {kind!r}")
    import tomli_w

    return tomli_w.dumps(_without_nulls(values))
