"""Installed dependencies are at or above the floors pinned in pyproject.toml.

The floors are security or behaviour releases (GitPython >= 3.1.41 for CVE-2024-22190,
markdown-it-py >= 3 for CVE-2023-26303, PyYAML >= 6.0.1, …): an environment that resolved
an older release fails here instead of running with a known hole.
"""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def requirements() -> list[Requirement]:
    data = tomllib.loads(PYPROJECT.read_text())
    return [Requirement(r) for r in data["project"]["dependencies"]]


def test_every_runtime_dependency_has_a_floor_and_a_ceiling() -> None:
    for req in requirements():
        ops = {spec.operator for spec in req.specifier}
        assert ">=" in ops and "<" in ops, f"{req}: needs a lower bound and an upper bound"


@pytest.mark.parametrize("req", requirements(), ids=lambda r: r.name)
def test_installed_version_meets_the_floor(req: Requirement) -> None:
    installed = Version(metadata.version(req.name))
    assert req.specifier.contains(installed, prereleases=True), (
        f"{req.name} {installed} is outside {req.specifier}: reinstall with `make install`"
    )


def test_the_check_would_catch_an_old_release() -> None:
    gitpython = next(r for r in requirements() if r.name.lower() == "gitpython")
    assert not gitpython.specifier.contains(Version("3.1.40"))
