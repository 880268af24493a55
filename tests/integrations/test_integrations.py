"""What all integrations share: no framework is imported until used, and a missing one names its extra."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from dagtools._errors import install_command
from dagtools.integrations._shared import require

FRAMEWORKS = {"pydantic_ai": "pydantic_ai", "openai_agents": "agents", "langchain": "langchain", "mellea": "mellea"}


def test_finding_the_integrations_imports_no_framework():
    names = ", ".join(f"dagtools.integrations.{name}" for name in FRAMEWORKS)
    code = f"import sys, dagtools, {names}; print(sorted(set({sorted(FRAMEWORKS.values())}) & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_missing_framework_names_the_extra_that_installs_it():
    with pytest.raises(ImportError, match=re.escape(f"This integration needs no_such_framework_here: {install_command('cooking')} (")):
        require("no_such_framework_here", "cooking")


def test_a_name_the_integration_lacks_is_an_attribute_error():
    import dagtools.integrations.mellea as integration

    with pytest.raises(AttributeError, match="has no attribute 'bake'"):
        integration.bake
