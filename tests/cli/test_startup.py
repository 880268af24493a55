"""What starting costs: `dagtools --help`, an argument error and `import dagtools` import none of the
heavy layers (graphql-core, httpx, strawberry, pydantic, the MCP SDK, anyio) until a command needs them."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("graphql", "httpx", "strawberry", "pydantic", "mcp", "mcp_types", "anyio", "yaml", "openai", "anthropic")

_PROBE = """
import sys
from dagtools.cli import main
try:
    main({argv!r})
except SystemExit:
    pass
print("heavy:" + ",".join(sorted({{name.split(".")[0] for name in sys.modules}} & set({heavy!r}))))
"""


def _heavy_imported(argv: list[str]) -> list[str]:
    probe = _PROBE.format(argv=argv, heavy=HEAVY)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    line = next(line for line in done.stdout.splitlines() if line.startswith("heavy:"))
    return [name for name in line.removeprefix("heavy:").split(",") if name]


@pytest.mark.parametrize("argv", [["--help"], ["mcp", "--help"], ["tools", "--help"], ["tools"], ["nonsense"]])
def test_help_and_argument_errors_import_no_heavy_layer(argv: list[str]) -> None:
    assert _heavy_imported(argv) == []


def test_public_names_load_on_first_use() -> None:
    probe = "import sys, dagtools; assert 'graphql' not in sys.modules; dagtools.Session; assert 'graphql' in sys.modules"
    subprocess.run([sys.executable, "-c", probe], check=True, timeout=60)
    import dagtools

    assert "Session" in dir(dagtools) and dagtools.Session.__name__ == "Session"
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        dagtools.Nope  # noqa: B018
