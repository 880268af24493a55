"""Reading YAML (and JSON, which YAML reads too) for scripts, model scripts, configs and tools configs, and
the keys such a file takes, each stated once with its type, default and meaning: the reader checks a file
against them and the documentation's reference pages print them."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._errors import ConfigError

__all__ = ["Key", "parse_data", "read_data"]


@dataclass(frozen=True)
class Key:
    """One key a file takes: its type and default as a reader of the file writes them ("required" where
    the key must be given), and what it means."""

    type: str
    default: str
    meaning: str


def read_data(path: str | Path, what: str) -> Any:
    """A YAML or JSON file's content, with errors that name the file; `-` is stdin, for pipes."""
    try:
        text = sys.stdin.read() if str(path) == "-" else Path(path).read_text()
    except FileNotFoundError:
        raise ConfigError(f"{what} {path} does not exist.") from None
    except OSError as error:
        raise ConfigError(f"{what} {path} cannot be read: {error.strerror or error}.") from None
    return parse_data(text, f"{what} {path}", json_first=str(path).endswith(".json"))


def parse_data(text: str, where: str, *, json_first: bool = True) -> Any:
    """Text that is JSON or YAML. JSON is tried first where it is likely: it is faster and stricter."""
    if json_first:
        try:
            return json.loads(text)
        except ValueError:
            pass
    import yaml  # only for text that is not JSON: a start without a YAML file skips it

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ConfigError(f"{where} is not valid YAML or JSON: {error}") from None
    except RecursionError:
        raise ConfigError(f"{where} is nested too deeply to read.") from None
