"""The package as a user installs it: the wheel is `dagtools-graphql` (the name `dagtools` on PyPI is
another project), imports and runs as `dagtools`, and carries the kitchen example so `dagtools demo`
works with no checkout around.

The wheel is built offline from a copy of the sources (no build isolation, so nothing is fetched) and
installed without dependencies into a fresh virtualenv; that virtualenv sees the already installed
dependencies through a `.pth` line naming this interpreter's site-packages, whose editable dagtools
(a finder started by its own `.pth`) stays inactive there. Commands run from a folder outside the
repository.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
VERSION = PYPROJECT["project"]["version"]
KITCHEN_FILES = {"api.py", "fries.yaml", "mcp.yaml", "tools.json"}
#: What a build reads from the top of the checkout: the metadata, the long description, and the files the
#: sdist carries for whoever unpacks it (MANIFEST.in names them; the licence is also in the wheel).
SOURCE_FILES = ["pyproject.toml", "README.md", "MANIFEST.in", "LICENSE", "CHANGELOG.md", "CONTRIBUTING.md", "SECURITY.md"]


def _run(*command: str | Path, **kwargs) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True, timeout=300, **kwargs)
    assert done.returncode == 0, f"{' '.join(map(str, command))} failed:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    source = tmp_path_factory.mktemp("source")
    for name in SOURCE_FILES:
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "dagtools", source / "dagtools", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    out = tmp_path_factory.mktemp("wheels")
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q", "-w", out, source)
    [built] = out.glob("*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> dict[str, str]:
    """A fresh virtualenv with only the wheel installed; returns the environment to run it in."""
    venv = tmp_path_factory.mktemp("venv")
    _run(sys.executable, "-m", "venv", "--without-pip", venv)
    python = venv / "bin" / "python"
    _run(sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", "-q", wheel)
    site = Path(_run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip())
    (site / "zz_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["HOME"] = str(tmp_path_factory.mktemp("home"))  # no user config, no schema cache of ours
    return {"env": env, "cwd": str(tmp_path_factory.mktemp("elsewhere")), "venv": str(venv)}


def test_the_wheel_is_dagtools_graphql_with_the_kitchen_inside(wheel):
    assert wheel.name.startswith(f"dagtools_graphql-{VERSION}-")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        [metadata] = [n for n in names if n.endswith(".dist-info/METADATA")]
        meta = archive.read(metadata).decode()
        [entry_points] = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        scripts = archive.read(entry_points).decode()
    assert "Name: dagtools-graphql\n" in meta
    assert "Requires-Python: >=3.11\n" in meta
    # Extras that name other extras name this distribution, so `pip install "dagtools-graphql[test]"` works.
    assert 'Requires-Dist: dagtools-graphql[cli,mcp,models,otel,redis,shell]; extra == "test"' in meta
    assert "Requires-Dist: dagtools[" not in meta
    assert "dagtools = dagtools.cli:main" in scripts
    assert {f"dagtools/examples/kitchen/{f}" for f in KITCHEN_FILES} <= set(names)
    # Only the dagtools package: no top-level `examples` or `tests` to clash with other projects'.
    assert {n.split("/")[0] for n in names if not n.startswith("dagtools_graphql-")} == {"dagtools"}


def test_the_installed_command_reports_its_version(installed):
    done = _run("dagtools", "--version", env=installed["env"], cwd=installed["cwd"])
    assert done.stdout.strip() == f"dagtools {VERSION}"


def test_the_demo_runs_from_the_installed_wheel(installed):
    where = _run("python", "-c", "import dagtools.examples as e; print(e.KITCHEN)", env=installed["env"], cwd=installed["cwd"])
    assert where.stdout.strip().startswith(installed["venv"]), "dagtools was imported from somewhere else than the wheel"
    done = _run("dagtools", "demo", env=installed["env"], cwd=installed["cwd"])
    assert "Fries_plate(" in done.stdout
    assert done.stdout.rstrip().endswith('{"fries": "Plate#2"}')
    assert str(ROOT) not in done.stdout + done.stderr


def test_the_installed_kitchen_script_replays(installed):
    """The shipped files are usable where pip put them: the fries script replays on the shipped API."""
    [path] = list(Path(installed["venv"]).glob("lib/python*/site-packages/dagtools/examples/kitchen/fries.yaml"))
    done = _run(
        "dagtools", "call", path.with_name("api.py").as_posix() + ":schema", path, "--json",
        env=installed["env"], cwd=installed["cwd"],
    )  # fmt: skip
    assert json.loads(done.stdout.splitlines()[-1]) == {"outputs": {"fries": "Plate#2"}}


def test_the_source_version_is_the_distribution_version():
    """`dagtools --version` outside an install (a bare checkout on PYTHONPATH) falls back to this."""
    import dagtools

    assert dagtools.__version__ == VERSION


# -- the release build: .github/workflows/release.yml's steps, offline ------------------------------------


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    """`python -m build` as the release workflow runs it (the sdist, then the wheel built from the sdist),
    from a copy of the sources, without build isolation so nothing is fetched."""
    source = tmp_path_factory.mktemp("release-source")
    for name in SOURCE_FILES:
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "dagtools", source / "dagtools", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    out = tmp_path_factory.mktemp("dist")
    _run(sys.executable, "-m", "build", "--no-isolation", "--skip-dependency-check", "--outdir", out, source)
    return out


def _sdist_and_wheel(dist: Path) -> tuple[Path, Path]:
    [sdist] = dist.glob("*.tar.gz")
    [wheel] = dist.glob("*.whl")
    return sdist, wheel


def test_the_release_build_passes_twine_check(release):
    """twine check renders the README as the long description PyPI will show, and --strict fails on any warning."""
    sdist, wheel = _sdist_and_wheel(release)
    assert sdist.name == f"dagtools_graphql-{VERSION}.tar.gz"
    assert wheel.name == f"dagtools_graphql-{VERSION}-py3-none-any.whl"
    done = _run(sys.executable, "-m", "twine", "check", "--strict", sdist, wheel)
    assert done.stdout.count("PASSED") == 2, done.stdout


def test_the_sdist_holds_what_the_wheel_needs(release, wheel):
    """The release wheel is built from the sdist alone: it must hold the same files as a wheel built from
    the source tree, the kitchen example included."""
    import tarfile

    sdist, from_sdist = _sdist_and_wheel(release)
    with tarfile.open(sdist) as archive:
        names = {n.split("/", 1)[1] for n in archive.getnames() if "/" in n}
    assert {"pyproject.toml", "README.md", "dagtools/py.typed"} <= names
    assert {"LICENSE", "CHANGELOG.md", "CONTRIBUTING.md", "SECURITY.md"} <= names
    assert {f"dagtools/examples/kitchen/{f}" for f in KITCHEN_FILES} <= names

    def files(path: Path) -> set[str]:
        with zipfile.ZipFile(path) as archive:
            return {n for n in archive.namelist() if ".dist-info/" not in n}

    assert files(from_sdist) == files(wheel)


def test_the_wheel_carries_the_licence_it_declares(release):
    """The wheel's metadata names Apache-2.0 and holds its full text, the LICENSE of the checkout."""
    _, wheel = _sdist_and_wheel(release)
    with zipfile.ZipFile(wheel) as archive:
        [metadata] = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        [licence] = [n for n in archive.namelist() if n.endswith(".dist-info/licenses/LICENSE")]
        assert "License-Expression: Apache-2.0" in archive.read(metadata).decode()
        text = archive.read(licence).decode()
    assert text == (ROOT / "LICENSE").read_text() and "Apache License" in text and "END OF TERMS AND CONDITIONS" in text


def test_the_long_description_is_the_readme(release):
    _, wheel = _sdist_and_wheel(release)
    with zipfile.ZipFile(wheel) as archive:
        [metadata] = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        meta = archive.read(metadata).decode()
    headers, _, body = meta.partition("\n\n")
    assert "Description-Content-Type: text/markdown" in headers
    assert body.strip() == (ROOT / "README.md").read_text().strip()


def test_the_release_workflow_builds_checks_and_publishes_from_the_tag():
    """The workflow runs the steps the tests above run, and publishes only from a tag, with trusted publishing."""
    import yaml

    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
    on = workflow.get("on", workflow.get(True))  # YAML 1.1 reads the key `on` as true
    assert on == {"push": {"tags": ["v*"]}}
    build, publish = workflow["jobs"]["build"], workflow["jobs"]["publish"]
    commands = "\n".join(step.get("run", "") for step in build["steps"])
    assert "python -m build" in commands and "twine check --strict dist/*" in commands
    installed = re.search(r"pip install (.+)", commands).group(1)
    release_extra = PYPROJECT["project"]["optional-dependencies"]["release"]
    assert shlex.split(installed) == release_extra, "the workflow installs the release extra's tools"
    assert publish["needs"] == "build" and "refs/tags/v" in publish["if"]
    assert publish["permissions"] == {"id-token": "write"}, "trusted publishing: an OIDC token, no stored secret"
    assert any(step.get("uses", "").startswith("pypa/gh-action-pypi-publish@") for step in publish["steps"])
    assert not any("password" in step.get("with", {}) for step in publish["steps"])


@pytest.mark.parametrize(
    ("direct_url", "command"),
    [
        ('{"url": "file:///home/ada/dagtools", "dir_info": {"editable": true}}', "pip install -e '/home/ada/dagtools[mcp]'"),
        ('{"url": "file:///home/ada/my%20clone", "dir_info": {}}', "pip install '/home/ada/my clone[mcp]'"),
        ('{"url": "file:///tmp/dagtools_graphql-0.1.0-py3-none-any.whl", "archive_info": {}}', "pip install 'dagtools-graphql[mcp]'"),
        (None, "pip install 'dagtools-graphql[mcp]'"),
        ("not json", "pip install 'dagtools-graphql[mcp]'"),
    ],
)
def test_a_missing_extra_is_installed_from_where_dagtools_came_from(direct_url, command):
    """The distribution is not on PyPI yet: an install from a clone (the README's way) is told to add
    the extra to that clone, not to fetch a distribution that is not there."""
    from dagtools._errors import install_command

    assert install_command("mcp", direct_url or "") == command


def test_the_missing_extra_messages_name_this_install():
    from dagtools._errors import ConfigError, install_command
    from dagtools.models._sdk import import_sdk

    with pytest.raises(ConfigError) as raised:
        import_sdk("dagtools_no_such_sdk", "openai")
    assert str(raised.value) == f"This model needs the dagtools_no_such_sdk package: {install_command('openai')}."
    # this checkout is installed editable (as the README and .ci/run install it): the message says so
    assert install_command("openai") in (f"pip install -e {shlex.quote(f'{ROOT}[openai]')}", "pip install 'dagtools-graphql[openai]'")
