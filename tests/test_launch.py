"""An evolve found through a folder a .pth file in site-packages names needs nothing added.

`make install` is such an install (an editable one, a plain path entry): `python -I` still runs
`site`, which reads those .pth files, so the hooks' and the watcher's command lines stay bare.
A folder only this process was given (PYTHONPATH) is lost under -I: the command names it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOUND = "import evolve; print(evolve.__file__)"
PROBE = f"from evolve import launch; print(launch.evolve_site()); print(launch.code({FOUND!r}))"


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A bare venv (no pip, no evolve): each test puts evolve where it means to."""
    where = tmp_path_factory.mktemp("launch") / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(where)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return where


def site_packages(venv: Path) -> Path:
    return venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"


def run(venv: Path, *args: str, env: dict[str, str] | None = None) -> list[str]:
    """The lines `venv`'s python prints, started away from the repository (no '' finds it)."""
    proc = subprocess.run(
        [str(venv / "bin" / "python"), *args],
        capture_output=True,
        text=True,
        env=env or {k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        cwd=venv,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


@pytest.mark.parametrize("spelled", ["absolute", "relative"])
def test_a_folder_a_pth_file_names_is_found_by_an_isolated_interpreter(venv, spelled):
    site = site_packages(venv)
    entry = str(ROOT) if spelled == "absolute" else os.path.relpath(ROOT, site)
    pth = site / "evolve-dev.pth"
    pth.write_text(f"# a comment, then a line of code: neither is a folder\nimport os\n{entry}\n")
    try:
        assert run(venv, "-I", "-c", PROBE) == ["None", FOUND]
    finally:
        pth.unlink()


def test_a_folder_only_this_process_was_given_is_named_in_the_command(venv):
    folder, command = run(venv, "-c", PROBE, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert folder == str(ROOT) and command.endswith(FOUND) and command != FOUND
    assert run(venv, "-I", "-c", command) == [str(ROOT / "evolve" / "__init__.py")]
    assert run(venv, "-I", "-c", "import importlib.util as u; print(u.find_spec('evolve'))") == ["None"]
