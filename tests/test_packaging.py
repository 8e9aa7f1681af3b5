"""The wheel carries the template workspace, hooks, data files and prompt (package data).

Built offline, without build isolation, from a copy of the source tree, then installed
with pip into a private target and imported from there.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.helpers import build_wheel

ROOT = Path(__file__).resolve().parents[1]
NEEDED = [
    "evolve/template_workspace/agent.toml",
    "evolve/template_workspace/memo.md",
    "evolve/template_workspace/gitignore",
    "evolve/template_workspace/skills/.gitkeep",
    "evolve/template_workspace/claude-plugin/plugin.json",
    "evolve/template_workspace/claude-plugin/marketplace.json",
    "evolve/template_workspace/codex-plugin/plugin.json",
    "evolve/template_workspace/hooks/hooks.json",
    "evolve/template_workspace/hooks/evolve-hook",
    "evolve/hooks/pre-commit",
    "evolve/hooks/evolve-watch.service",
    "evolve/hooks/org.evolve.watch.plist",
    "evolve/examples/parser-app__5b1c7e2a-0d4f-4a8e-9c61-3f2b8d9e1a01.jsonl",
    "evolve/examples/demo/model-answers.json",
    "evolve/examples/demo/session-4.jsonl",
    "evolve/transcripts/data/transient_patterns.txt",
    "evolve/transcripts/data/corrections.toml",
    "evolve/transcripts/data/secrets.toml",
    "evolve/transcripts/data/stopwords.txt",
    "evolve/reflect/prompt.md",
]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.mark.slow
def test_wheel_holds_package_data(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = [n for n in NEEDED if n not in names]
    assert not missing, f"wheel lacks {missing}"
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    assert "evolve = evolve.cli:main" in zipfile.ZipFile(wheel).read(entry).decode()
    meta = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("/METADATA"))).decode()
    import evolve

    assert f"Version: {evolve.__version__}\n" in meta  # one place: evolve/__init__.py
    assert "License-Expression: MIT\n" in meta and any(n.endswith("licenses/LICENSE") for n in names)


@pytest.mark.slow
def test_installed_wheel_creates_an_agent(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
        capture_output=True,
        timeout=180,
    )
    script = (
        "import sys, evolve\n"
        f"assert evolve.__file__.startswith({str(target)!r}), evolve.__file__\n"
        "from evolve.cli import main\n"
        "sys.exit(main(['init', 'packaged']))\n"
    )
    env_path = str(target)
    # -S: no site-packages, so neither the editable install nor anything else shadows the wheel
    proc = subprocess.run(
        [sys.executable, "-S", "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": env_path},
        timeout=60,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    home = Path(os.environ["EVOLVE_HOME"])
    repo = home / "agents" / "packaged"
    assert (repo / "memo.md").read_text().startswith("# Memo of packaged")
    assert (repo / ".gitignore").exists()
    assert (repo / ".claude-plugin" / "plugin.json").exists() and (repo / "hooks" / "evolve-hook").exists()
    assert not (repo / "__init__.py").exists() and not (repo / "__pycache__").exists()
    assert "evolve-managed-hook" in (repo / ".git" / "hooks" / "pre-commit").read_text()


def _declared_packages() -> list[str]:
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]


def test_every_package_of_the_tree_is_declared() -> None:
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "evolve").rglob("__init__.py")}
    data = {  # folders of data (no __init__.py) a package could be named after: declared too,
        # or setuptools warns (`claude-plugin/` is no name: its files are the package's data)
        ".".join(p.relative_to(ROOT).parts)
        for p in (ROOT / "evolve").rglob("*")
        if p.is_dir()
        and p.name.isidentifier()
        and p.name != "__pycache__"
        and not (p / "__init__.py").exists()
    }
    assert set(_declared_packages()) == found | data


def test_the_build_warns_about_nothing(wheel: Path) -> None:
    # newcomer 16: the first `make install` printed ~160 lines of "Package 'evolve.examples' is
    # absent from the `packages` configuration"
    log = (wheel.parent.parent / "build.log").read_text()
    assert "Successfully built" in log or "Stored in directory" in log, log[-2000:]
    assert "absent from the `packages` configuration" not in log and "BuildBackendWarning" not in log


def test_the_editable_install_reads_the_repository_through_a_plain_path_entry(tmp_path: Path) -> None:
    """`make install` (`make test`, `make demo`) reads the repository's only copies of hooks and template.

    Isolated and away from the repository, as the hooks run: found through the .pth file's path
    entry, with no import hook on sys.meta_path (an editable finder's imports cost ~16 ms in
    every Python process, and the suite starts thousands).
    """
    script = (
        "import sys\n"
        "from importlib import resources\n"
        "print(resources.files('evolve.hooks') / 'pre-commit')\n"
        "print(resources.files('evolve.template_workspace') / 'memo.md')\n"
        "print(*[getattr(f, '__module__', '') for f in sys.meta_path])\n"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-c", script],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
        timeout=60,
    ).stdout.splitlines()
    hooks = ROOT / "evolve" / "hooks" / "pre-commit"
    assert out[:2] == [str(hooks), str(ROOT / "evolve" / "template_workspace" / "memo.md")]
    assert "__editable__" not in out[2], out[2]


def test_a_run_with_skips_ends_saying_why(tmp_path: Path) -> None:
    # newcomer 16: `make test` ended with "40 skipped" and no hint that they need ../shared
    (tmp_path / "conftest.py").write_text("from tests.skip_summary import pytest_terminal_summary  # noqa\n")
    (tmp_path / "test_x.py").write_text(
        "import pytest\n"
        "def test_a(): pytest.skip('../shared/data/claude-code is not present')\n"
        "def test_b(): pytest.skip('../shared/data/claude-code is not present')\n"
        "def test_c(): pytest.skip('mounting a tmpfs needs root')\n"
        "def test_d(): pass\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = lambda *extra: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra, str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    out = run().stdout
    assert "3 skipped, and why (`pytest -rs` names each test)" in out, out
    assert "    2  ../shared/data/claude-code is not present" in out
    assert "    1  mounting a tmpfs needs root" in out
    assert "and why" not in run("-rs").stdout  # -rs lists each one already
