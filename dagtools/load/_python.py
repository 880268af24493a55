"""Schemas defined in Python files: `path/to/file.py:attribute` imported by path, afresh each time."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from graphql import GraphQLSchema

from .._errors import SchemaLoadError

__all__ = ["call_factory", "import_file", "is_strawberry_schema", "kind_of", "schema_names"]


def is_strawberry_schema(obj: object) -> bool:
    """Whether obj is a strawberry Schema (or a subclass), without importing strawberry."""
    if not isinstance(getattr(obj, "_schema", None), GraphQLSchema):
        return False
    return any(cls.__module__.split(".")[0] == "strawberry" for cls in type(obj).__mro__)


def kind_of(value: object) -> str:
    if isinstance(value, type):
        return f"the class {value.__name__}"
    name = type(value).__name__
    return f"an {name}" if name[:1].lower() in "aeiou" else f"a {name}"


def schema_names(module: object) -> list[str]:
    """Public module-level names holding a GraphQLSchema or strawberry Schema."""
    return sorted(
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and (isinstance(value, GraphQLSchema) or is_strawberry_schema(value))
    )


def call_factory(factory: Callable[[], object], *, origin: str) -> object:
    try:
        inspect.signature(factory).bind()
    except TypeError:
        raise SchemaLoadError(
            f"Cannot load {origin}: it is a function that needs arguments. Point at a schema, or at a "
            "function that takes no arguments and returns one."
        ) from None
    except ValueError:  # no signature available (some builtins): just try calling it
        pass
    if inspect.iscoroutinefunction(factory):
        raise SchemaLoadError(f"Cannot load {origin}: it is an async function. Use a plain function that returns the schema.")
    try:
        return factory()
    except Exception as exc:
        raise SchemaLoadError(f"Cannot load {origin}: calling it raised {type(exc).__name__}: {exc}") from exc


def import_file(path: Path, *, origin: str) -> Any:
    """Import a Python file by path, afresh, under a stable name derived from its location.

    A file inside a package (a folder with `__init__.py`) is imported as a module of that package,
    so its relative imports work; the package's root folder is on sys.path while it runs. Messages name
    the file as it was given: a symlink's target is where it runs, not what the user typed.
    """
    typed, path = path, path.resolve()
    digest = hashlib.sha256(str(path).encode("utf-8")).hexdigest()[:12]
    stem = re.sub(r"\W", "_", path.stem)
    name = f"_dagtools_source_{stem}_{digest}"
    package, root = _package_of(path)
    search_root = root if package else path.parent
    added = str(search_root) not in sys.path
    if added:
        sys.path.insert(0, str(search_root))
    try:
        if package and _package_is(package, path.parent):
            name = f"{package}.{name}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None:
            raise SchemaLoadError(f"Cannot load {origin}: {typed} cannot be imported as a Python module.")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            # Compiled from the source every time: a cached .pyc of an edited file can look current.
            code = compile(path.read_bytes(), str(path), "exec")
            exec(code, module.__dict__)  # noqa: S102 - running the user's own schema module is the point
        except BaseException as exc:
            sys.modules.pop(name, None)
            if isinstance(exc, SchemaLoadError) or not isinstance(exc, Exception):
                raise
            raise SchemaLoadError(f"Cannot load {origin}: importing {typed.name} raised {type(exc).__name__}: {exc}") from exc
        return module
    finally:
        if added:
            try:
                sys.path.remove(str(search_root))
            except ValueError:
                pass


def _package_of(path: Path) -> tuple[str, Path]:
    """The dotted package a file sits in ('' when none) and the folder that package is rooted in."""
    parts: list[str] = []
    folder = path.parent
    while (folder / "__init__.py").is_file() and folder.name.isidentifier():
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts), folder


def _package_is(package: str, folder: Path) -> bool:
    """Whether `package` imports from `folder` (and not some other package of the same name)."""
    try:
        module = importlib.import_module(package)
    except Exception:
        return False
    return any(Path(p).resolve() == folder for p in getattr(module, "__path__", ()))
