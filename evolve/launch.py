"""How evolve starts Python: isolated (-I), finding evolve itself and nothing of the folder's.

Every interpreter evolve starts or writes into a command (the agent hooks, the watcher, the
service unit, the agent repository's pre-commit hook) runs with -I: the working folder, the
user site and every PYTHON* variable (PYTHONPATH, PYTHONHOME, PYTHONSTARTUP, PYTHONINSPECT,
PYTHONUSERBASE, PYTHONWARNINGS, PYTHONBREAKPOINT …) are ignored, so nothing a project holds
or sets (a .envrc, "env" in a committed .claude/settings.json) runs there. An isolated
interpreter still reads its own site-packages: a venv, pipx, a system-wide or an editable
install need nothing more. evolve installed where it does not look (`pip install --user`,
a PYTHONPATH of the person's) is found through that folder, named in the command: added as
a site (its .pth files too) before site-packages, where the user site would have been.

Standard library only and cheap: the SessionStart hook uses it to start the watcher.
"""

# ruff: noqa: PTH100, PTH118, PTH120, PTH208
import functools
import os
import sys

ISOLATED = "-I"
# `-c`, not `-m`: runpy alone costs about half a bare interpreter start (the hooks' budget)
HOOK = "import evolve.hookmain as h; h.run()"
CLI = "import sys; from evolve.cli import main; sys.exit(main())"
PRECOMMIT = "import sys; from evolve.precommit import main; sys.exit(main())"
_ADD_SITE = (
    "import site, sys; p = sys.path; n = len(p); site.addsitedir({folder!r}); new = p[n:]; del p[n:]; "
    "i = min([p.index(s) for s in site.getsitepackages() if s in p] + [n]); p[i:i] = new; "
)


def code(body: str, python: str | None = None) -> str:
    """`body` after what lets an isolated `python` (default: this one) find this evolve."""
    folder = evolve_site() if python is None or _is_this(python) else None
    return body if folder is None else _ADD_SITE.format(folder=folder) + body


def argv(python: str, body: str, *args: str) -> list[str]:
    """The command line that runs `body` in `python`, isolated, with `args` in sys.argv[1:]."""
    return [python, ISOLATED, "-c", code(body, python), *args]


@functools.cache
def evolve_site() -> str | None:
    """The folder this process found evolve through, if an isolated interpreter would miss it.

    None when an isolated interpreter finds this very evolve in its site-packages: directly,
    in a folder a .pth file there names (an editable install's path entry), or through an
    import hook a .pth file there installs (an editable install's finder).
    """
    import site
    from importlib.machinery import PathFinder

    import evolve

    origin = os.path.realpath(evolve.__file__ or "")

    def finds(spec: object) -> bool:
        found = getattr(spec, "origin", None)
        return isinstance(found, str) and os.path.realpath(found) == origin

    sites = site.getsitepackages()
    if finds(PathFinder.find_spec("evolve", _isolated_path(sites))):
        return None
    owners = {os.path.realpath(s) for s in sites}
    through = None
    for entry in sys.path:  # where this process found it: a folder on sys.path …
        if entry and finds(PathFinder.find_spec("evolve", [entry])):
            through = os.path.abspath(entry)
            break
    for finder in sys.meta_path:  # … or an import hook a .pth file installed
        module = sys.modules.get(getattr(finder, "__module__", None) or "")
        where = os.path.dirname(os.path.realpath(getattr(module, "__file__", None) or "/"))
        try:
            hit = finder is not PathFinder and finds(finder.find_spec("evolve", None))
        except Exception:  # noqa: S112 - someone else's finder: not the one
            continue
        if hit and where in owners:
            return None
        if hit and through is None:
            through = where
    return through


def _isolated_path(sites: list[str]) -> list[str]:
    """Each site-packages folder, then the folders its .pth files name: sys.path as -I builds it.

    -I still runs `site`, which reads the .pth files (only -S skips them); a line that runs
    code ("import …") is not followed: at worst the command names a folder it did not need.
    """
    path = []
    for folder in sites:
        path.append(folder)
        try:
            names = sorted(n for n in os.listdir(folder) if n.endswith(".pth") and not n.startswith("."))
        except OSError:
            continue
        for name in names:
            try:
                with open(os.path.join(folder, name), encoding="utf-8") as file:
                    lines = file.read().splitlines()
            except (OSError, UnicodeDecodeError):
                continue
            for line in lines:
                entry = line.rstrip()
                if entry and not entry.startswith(("#", "import ", "import\t")):
                    path.append(os.path.join(folder, entry))
    return path


def _is_this(python: str) -> bool:
    """Whether `python` is this interpreter (its folder too: each venv's python links to one binary)."""
    here = os.path.abspath(sys.executable)
    there = os.path.abspath(python)
    return there == here or (
        os.path.dirname(there) == os.path.dirname(here) and os.path.realpath(there) == os.path.realpath(here)
    )
