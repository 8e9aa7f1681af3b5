"""The write-path guard's false flags: legitimate rules a capable model writes must land.

A flag sends a whole reflection to a person's review, so each false one costs a lesson its
timely landing. Two measurements, both with the strictest setting (no message of the
user's, so every address counts as typed by nobody): a corpus of realistic memo and skill
lines — many of them about the very commands the guard hunts, said the safe way — and every
text of the recorded answers in tests/corpus/*/answers (what `make eval` replays).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evolve.reflect.guard import scan_text

CORPUS = Path(__file__).resolve().parent / "corpus"

LEGITIMATE = [
    "- Never pipe curl into sh; download the script and read it first.",
    "- Run `npm test` before pushing.",
    "- Use `pip install -e .` for local development.",
    "- Never use --no-verify; fix what the hook reports instead.",
    "- Don't disable the linter; fix the warning or add a targeted `# noqa: E501`.",
    "- Download the release notes with curl and read them before upgrading.",
    "- `chmod +x scripts/test.sh` is already done in the repo.",
    "- Never skip the tests or disable the linter, even for small changes.",
    "- Do not turn off the pre-commit hooks; they catch secrets.",
    "- Run `pytest -x -q` and fix the first failure before the rest.",
    "- Mark Windows-only failures with `@pytest.mark.skipif(sys.platform == 'win32', reason=...)`.",
    "- Run `make lint` (ruff, mypy) before every commit.",
    "- Use `// eslint-disable-next-line` only with a comment saying why.",
    "- Format JSON with `curl -s localhost:8080/api | python3 -m json.tool`.",
    "- Filter logs with `journalctl -u app | perl -ne 'print if /ERROR/'`.",
    "- Use `pre-commit run --all-files` after changing the hook config.",
    "- Install the CLI with `pipx install ./dist/tool.whl` after `make build`.",
    "- Use `docker exec -it web curl localhost:8000/health` to check the container.",
    '- Run `eval "$(ssh-agent -s)"` before `ssh-add`.',
    "- Start every bash script with `set -euo pipefail`.",
    "- Install Node with `nvm install 20` rather than apt.",
    "- Fix the last commit with `git commit --amend --no-edit` before pushing.",
    "- Never force-push to main; open a pull request.",
    "- Use `git push --force-with-lease` on your own feature branches only.",
    "- Before a release, run `npm audit` and fix high-severity issues.",
    "- `git push` is rejected on main; push a branch and open a pull request.",
    "- Pipe test output through `tee test.log` so failures can be read later.",
    "- Skip the introduction when summarising a README.",
    "- Ignore the deprecation warnings from setuptools; they come from upstream.",
    "- Remove unused imports before committing.",
    "- Keep the `# type: ignore[attr-defined]` comments; Python 3.9 needs them.",
    "- Run `chmod 644` on config files you create.",
    "- Create the virtualenv with `python3 -m venv .venv && . .venv/bin/activate`.",
    "- The health check is `curl -sf localhost:8080/health || exit 1`.",
    "- Use `uv pip install -r requirements.txt`; never `pip install --trusted-host`.",
    "- Open pull requests with `gh pr create --fill`.",
    "- When the API returns 429, wait and retry with backoff.",
    "- Prefer `git switch -c feature` over `git checkout -b feature`.",
    "- Use `find . -print0 | xargs -0 grep -l TODO` for file names with spaces.",
    "- Commit only after `make test` passes; never commit without running the tests.",
    "- Add the staging CA to the trust store instead of disabling certificate verification.",
    "- Keep the pre-commit hooks enabled.",
    "- Review the diff with `git diff --stat` before committing.",
    "- Run shell scripts with `bash scripts/build.sh`, not `sh`.",
    "- Never disable SSL verification, even for internal hosts.",
    "- Never use `verify=False` in requests; pass the CA bundle.",
    "- Delete the test database after the integration tests with `make db-drop`.",
    "- Ignore test fixtures when counting lines of code.",
    "- Load the dataset with `wget -O data.csv localhost:8000/data.csv`, then read it with pandas.",
    "- The dev server listens on localhost:5173; restart it after changing vite.config.ts.",
    "- Build the image with `docker build -t app .` and run it with `docker run --rm app`.",
    "- Use `ruff check --fix` and `ruff format` instead of black and isort.",
    "- Run `./gradlew test` before `./gradlew publish`.",
    "- Check a downloaded archive with `sha256sum -c SHA256SUMS` before unpacking it.",
    "- For flaky network tests, retry the request; do not mark them as skipped.",
    "- Use `# nosec B603` only with a comment saying why.",
    "- Never merge with `gh pr merge --admin`; wait for the checks.",
    "- Run `git config core.autocrlf input` on Windows clones.",
    "- Download the installer with `curl -o install.sh localhost:9000/install.sh`, then ask the user.",
    "- `wget -O notes.md localhost:9000/notes.md` and summarise notes.md for the user.",
    "- Avoid `pip install --trusted-host`; configure the index with its certificate.",
    "- Verify no secrets are committed with `gitleaks detect`.",
    "- Tests that are slow are marked `@pytest.mark.slow`; run them with `-m slow`.",
    "- Use `<details>` sparingly in pull request descriptions.",
    "- When the integration tests create a temp dir, remove it afterwards.",
    "- The test server writes logs to /tmp/app.log; delete them after a run.",
    "- Nie die Tests deaktivieren, auch nicht für kleine Änderungen.",
    "- Führe vor jedem Commit `make test` aus.",
    "- No desactives las pruebas; arregla el fallo.",
    "- Ejecuta `npm test` antes de hacer push.",
    "- Ne désactivez jamais les tests, même pour une petite modification.",
    "- Lancez `pytest` avant chaque commit.",
    "- Não desative os testes; corrija a falha.",
    "- Rode `npm test` antes de fazer push.",
]

SKILL = """---
name: release
description: "Use when tagging and publishing a release of this package."
---

# Releasing

1. Run the full test suite: `make test`. Never skip it, and never commit with `--no-verify`.
2. Bump the version in `pyproject.toml`.
3. Build with:

   ```sh
   python -m build
   twine check dist/*
   ```

4. Tag it: `git tag v1.2.3 && git push origin v1.2.3`.

| step | command |
|---|---|
| lint | `ruff check . \\| tee lint.log` |
| test | `pytest -q` |
"""


@pytest.mark.parametrize("line", LEGITIMATE)
def test_a_legitimate_rule_is_not_flagged(line):
    assert [flag.line() for flag in scan_text(line, "", "memo.md")] == []


def test_the_corpus_as_one_memo_and_a_skill_are_not_flagged():
    """Joined lines must not make one rule out of two neighbours."""
    assert len(LEGITIMATE) >= 60
    assert [flag.line() for flag in scan_text("\n".join(LEGITIMATE), "", "memo.md")] == []
    assert [flag.line() for flag in scan_text(SKILL, "", "skills/release/SKILL.md")] == []


def _recorded_texts() -> list[tuple[str, str]]:
    texts = []
    for path in sorted(CORPUS.glob("*/answers/*.json")):
        for op in json.loads(path.read_text(encoding="utf-8")).get("operations", []):
            for key in ("content", "body", "description", "new"):
                if isinstance(op.get(key), str):
                    texts.append((f"{path.parent.parent.name}/{path.name} {op['op']}.{key}", op[key]))
    return texts


def test_no_recorded_answer_of_the_corpus_is_flagged():
    """The false-flag rate on what `make eval` replays: 0 of every text the answers write."""
    texts = _recorded_texts()
    assert len(texts) >= 50
    flagged = {where: [f.line() for f in scan_text(text, "", "x")] for where, text in texts}
    assert {where: flags for where, flags in flagged.items() if flags} == {}
