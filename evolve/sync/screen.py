"""What the server's main brings is judged like a model's answer before it may reach main here.

Main is what the agent reads (memo.md and skills/ go into every session's context), and the
server is anyone who can push to it: a commit's author, committer and `Evolve-*` trailers are
whatever they wrote. So the change the server's main brings to memo.md, skills/ and
agent.toml, guards.toml and each lesson's eval case under evals/ — only what is new beyond
the commits this machine already has (`known`) — goes
through what a reflection's text goes through: the write-path guard's shapes (download and
run, send data away, safety off; a bare URL is no flag here, since no transcript says who
typed it), invisible characters, secrets, skill frontmatter and size caps, a symbolic link
(`scripts/key -> ~/.ssh/id_rsa`: the harness would read through it), more skills than
`max_skills`, an agent.toml that does not load or that turns `review` off, a guard the
hook would leave out (an unknown tool, a pattern the one door refuses: never one that
hangs), an eval case outside its schema (a grader type it does not know, a pattern the
linear-time door refuses), and a plugin part that is not evolve's own text (a hook, a
manifest, an MCP server: Claude Code and Codex run them wherever the agent is loaded as a
plugin, `template.PLUGIN_PARTS`). With `review =
true` a commit that says it is a reflection must have been a proposal this machine knew (a
branch here, or on the server at the last sync) whose review brought it to main: else it is
the model's lesson nobody reviewed here, whatever its author and trailers claim.

Anything found holds the whole main back (`integrate` raises `Held`): nothing of it is taken
and nothing is pushed until the server's main changes or a person takes it (`evolve sync
--accept-held NAME`: the main held last counts as known). Pure judging on git objects:
nothing here writes.
"""

from __future__ import annotations

import posixpath
from pathlib import Path

from evolve import config as config_mod
from evolve.reflect import evalcase
from evolve.reflect.guard import scan_text
from evolve.store.history import PROPOSALS, clean_line
from evolve.store.repo import Entry, Repo
from evolve.store.worktree import LINK
from evolve.sync.refs import SYNCED
from evolve.transcripts.redact import find_invisible, find_secrets, make_visible, redact
from evolve.workspace import conflicts
from evolve.workspace import memo as memo_mod
from evolve.workspace.agent import Agent
from evolve.workspace.skills import SKILL_FILE, parse_skill
from evolve.workspace.template import PLUGIN_PARTS, plugin_files

HELD = "refs/evolve/held/main"  # the server's main the last sync held back (what --accept-held takes)
GUARDS = "guards.toml"
# what the agent reads, its settings, its guards, and each lesson's eval case
WATCHED = (memo_mod.MEMO_FILE, "agent.toml", GUARDS, "skills", evalcase.EVALS)
MAX_BYTES = 1_000_000  # a file the agent reads, beyond any cap a memo or skill has
SHOWN = 3  # reasons listed in the one line; the rest counted


def screen(agent: Agent, server: str, known: list[str]) -> list[str]:
    """Why the server's main may not come in as it is (one short reason each); [] when it may."""
    repo, known = agent.repo, list(dict.fromkeys(known))
    config = agent.lenient_config
    theirs = repo.tree_entries(server, WATCHED)
    ours = [repo.tree_entries(rev, WATCHED) for rev in known]
    new = {path: entry for path, entry in theirs.items() if all(tree.get(path) != entry for tree in ours)}
    reasons = [f"{path} is a symbolic link" for path, entry in sorted(new.items()) if entry[0] == LINK]
    sizes = _sizes(repo, [entry[1] for entry in new.values()])
    large = {path for path, entry in new.items() if sizes.get(entry[1], 0) > MAX_BYTES}
    reasons += [f"{path} is {sizes[new[path][1]]} bytes (at most {MAX_BYTES})" for path in sorted(large)]
    readable = sorted(p for p, e in new.items() if e[0] != LINK and p not in large)
    blobs = repo.read_blobs([new[p][1] for p in readable])
    had = list(zip(known, ours, strict=True))
    before = repo.read_blobs([f"{rev}:{path}" for path in readable for rev, tree in had if path in tree])
    for path in readable:
        data = blobs.get(new[path][1]) or b""
        olds = [before.get(f"{rev}:{path}") for rev in known]
        reasons += _content(path, data, [old for old in olds if old is not None])
        reasons += _structure(agent, config, path, data, olds[0] if olds else None)
    reasons += _conflicted(agent, {path: blobs.get(new[path][1]) or b"" for path in readable}, before)
    if "agent.toml" not in theirs and any("agent.toml" in tree for tree in ours):
        reasons += _settings(agent, config, "")  # deleted: the defaults, review off among them
    reasons += _skill_count(theirs, ours[0] if ours else {}, config.limits.max_skills)
    reasons += _plugin_parts(agent, server, known)
    if config.review:
        reasons += _unreviewed(repo, server, known)
    return reasons


def _plugin_parts(agent: Agent, server: str, known: list[str]) -> list[str]:
    """A plugin part the server's main brings that is not what evolve writes there."""
    repo = agent.repo
    theirs = repo.tree_entries(server, PLUGIN_PARTS)
    ours = [repo.tree_entries(rev, PLUGIN_PARTS) for rev in known]
    new = {path: entry for path, entry in theirs.items() if all(tree.get(path) != entry for tree in ours)}
    if not new:
        return []
    evolves = plugin_files(agent.name)
    blobs = repo.read_blobs([entry[1] for entry in new.values()])
    return [
        f"{path} is a plugin part evolve did not write (it runs commands wherever the agent is a plugin)"
        for path, entry in sorted(new.items())
        if entry[0] == LINK or blobs.get(entry[1]) != evolves.get(path)
    ]


def leaving_links(repo: Repo, server: str | None, main: str) -> list[str]:
    """Links `main` has and the server's main has not, that lead out of the repository (one line each).

    A link a person committed (`skills/x/SKILL.md -> /home/pat/notes.md`) would carry this
    machine's paths to the server, and no other machine takes a link from it (`screen`).
    """
    ours = {p: e for p, e in repo.tree_entries(main, WATCHED).items() if e[0] == LINK}
    if not ours:
        return []
    theirs = repo.tree_entries(server, WATCHED) if server else {}
    new = {path: entry for path, entry in ours.items() if theirs.get(path) != entry}
    targets = repo.read_blobs([entry[1] for entry in new.values()])
    found = []
    for path, entry in sorted(new.items()):
        target = (targets.get(entry[1]) or b"").decode("utf-8", "replace")
        inside = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
        if target.startswith("/") or inside == ".." or inside.startswith("../"):
            found.append(f"{path} is a link to {_shown(target, 120)}")
    return found


def held_message(agent: Agent, reasons: list[str]) -> str:
    """The one line `evolve sync` and `evolve status` show for a held main."""
    shown = "; ".join(reasons[:SHOWN]) + (
        f"; and {len(reasons) - SHOWN} more" if len(reasons) > SHOWN else ""
    )
    return (
        f"the server's main brings what evolve does not take unreviewed ({shown}); nothing was taken or "
        f"pushed. See it with `git -C {agent.path} diff main {HELD}`; `evolve sync --accept-held "
        f"{agent.name}` takes it as reviewed, or undo it on the server"
    )


def _shown(text: str, limit: int = 100) -> str:
    """Server text for a reason: invisible characters shown, secrets redacted, one short line."""
    return clean_line(redact(make_visible(text)), limit)


def _content(path: str, data: bytes, olds: list[bytes]) -> list[str]:
    """The guard, invisible characters and secrets on the lines this machine has in no version."""
    if b"\0" in data[:8000]:
        return []  # a binary file: no text for a session to read
    seen = {line for old in olds for line in old.decode("utf-8", "replace").splitlines()}
    added = "\n".join(
        line for line in data.decode("utf-8", "replace").splitlines() if line not in seen and line.strip()
    )
    if not added:
        return []
    found = [_shown(flag.line()) for flag in scan_text(added, "", path) if flag.kind != "url"]
    hidden = find_invisible(added)
    if hidden:
        found.append(
            f"{path} holds invisible characters ({hidden[0][0]}" + (" …)" if len(hidden) > 1 else ")")
        )
    secrets = find_secrets(added)
    if secrets:
        found.append(f"{path} holds a secret ({', '.join(sorted({kind for kind, _, _ in secrets}))})")
    return found


def _conflicted(agent: Agent, files: dict[str, bytes], before: dict[str, bytes | None]) -> list[str]:
    """Files the server brings holding a merge's conflict markers that no known version of them held.

    Pushed past a hook (`--no-verify`), they would stop every reader here (the session leaves
    the memo out, reflection holds). Each file by this machine's conflict-marker-size: a
    server tree with a `.gitattributes` of its own never gets here (`integrate.check_tree`).
    `before`: the known versions, `rev:path` → bytes.
    """
    texts = {
        path: data.decode("utf-8", "replace") for path, data in files.items() if conflicts.may_hold(data)
    }
    marked = conflicts.conflicted(agent.path, texts)
    for rev in {spec.split(":", 1)[0] for spec in before} if marked else ():
        olds = {path: before.get(f"{rev}:{path}") or b"" for path in marked}
        marked -= conflicts.conflicted(
            agent.path,
            {path: old.decode("utf-8", "replace") for path, old in olds.items() if conflicts.may_hold(old)},
        )
    return [f"{path} holds merge conflict markers nobody resolved" for path in sorted(marked)]


def _structure(
    agent: Agent, config: config_mod.Config, path: str, data: bytes, old: bytes | None
) -> list[str]:
    """A memo, skill or agent.toml that breaks a rule this machine's version keeps."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return [f"{path} is not UTF-8 text"] if path == "agent.toml" or path.endswith(SKILL_FILE) else []
    previous = (old or b"").decode("utf-8", "replace") if old is not None else None
    if path == memo_mod.MEMO_FILE:  # its shape is a person's business (a renamed section); its size not
        limit = config.limits.memo_section_chars
        return [
            f"memo.md: '{heading}' is {size} chars (at most {limit})"
            for key, heading in memo_mod.HEADINGS.items()
            if (size := len(memo_mod.section_content(text, key))) > limit
            and size > len(memo_mod.section_content(previous or "", key))
        ]
    if path == "agent.toml":
        return _settings(agent, config, text)
    if evalcase.case_lesson(path) is not None:  # an eval case: its schema, its patterns (linear time)
        return [_shown(problem, 160) for problem in evalcase.file_problems(path, text)]
    if path == GUARDS:  # each guard as the hook would check it: a tool, a pattern the door runs …
        from evolve.workspace.guards import problems, sweeping

        # … and no deny that refuses every call of its tools (`.*`): one push would stop every session
        had = set(problems(previous) + sweeping(previous)) if previous is not None else set()
        return [_shown(p, 160) for p in problems(text) + sweeping(text) if p not in had]
    name, _, rest = path.removeprefix("skills/").partition("/")
    if rest != SKILL_FILE:
        return []
    tokens = config.limits.skill_body_tokens
    skill = parse_skill(text, name, Path(path), tokens)
    had = set(parse_skill(previous, name, Path(path), tokens).problems) if previous is not None else set()
    return [f"{path}: {_shown(p, 120)}" for p in skill.problems if p not in had]


def _settings(agent: Agent, config: config_mod.Config, text: str) -> list[str]:
    """agent.toml from the server: it loads as it would here, and it leaves `review = true` on."""
    import tomllib

    try:
        raw = tomllib.loads(text)
        theirs = config_mod.merge(
            config_mod.Config(), raw, "agent.toml", agent=True, shared=agent.local_config_path
        )
    except (tomllib.TOMLDecodeError, config_mod.ConfigError) as exc:
        return [f"agent.toml does not load ({_shown(str(exc), 160)})"]
    if config.review and not theirs.review:
        return ["agent.toml turns review off (review = true here)"]
    return []


def _skill_count(theirs: dict[str, Entry], ours: dict[str, Entry], cap: int) -> list[str]:
    """More skills than `max_skills` (and more than here): thousands would reach every session."""
    count = sum(1 for path in theirs if _is_skill_file(path))
    if count > cap and count > sum(1 for path in ours if _is_skill_file(path)):
        return [f"{count} skills, over max_skills = {cap}"]
    return []


def _is_skill_file(path: str) -> bool:
    parts = path.split("/")
    return len(parts) == 3 and parts[0] == "skills" and parts[2] == SKILL_FILE


def _unreviewed(repo: Repo, server: str, known: list[str]) -> list[str]:
    """Reflections (by their trailer) bringing lines that no proposal known here held.

    A proposal merged on the server (a merge, a rebase), or accepted on another machine (the
    accept keeps the reflection's trailers), brings only its proposal's lines: reviewed.
    Known: a proposal branch here, or one the server had at the last sync.
    """
    fmt = "--format=%H%x1f%(trailers:key=Evolve-Kind,valueonly,separator=%x2c)%x1f%s"
    out = repo.text("log", fmt, "--no-merges", server, "--not", *known, "--", *WATCHED)
    claimed = {}
    for line in out.splitlines():
        sha, kind, subject = (line.split("\x1f") + ["", ""])[:3]
        if "reflection" in kind.split(","):
            claimed[sha] = subject
    if not claimed:
        return []
    added = _added_lines(repo, list(claimed))
    tips = sorted(set(repo.refs(f"refs/heads/{PROPOSALS}", SYNCED + PROPOSALS).values()))
    paths = sorted({path for files in added.values() for path in files})
    landing = _lines_at(repo, [server], paths)  # what would reach main: there, and new here
    landing = {path: lines - _lines_at(repo, known, [path])[path] for path, lines in landing.items()}
    proposed = _lines_at(repo, tips, paths)
    left = [
        subject
        for sha, subject in claimed.items()
        if any(not (lines & landing[path]) <= proposed[path] for path, lines in added.get(sha, {}).items())
    ]
    if not left:
        return []
    subjects = "; ".join(_shown(subject, 60) for subject in left[:2])
    return [f"{len(left)} reflection(s) never up for review here (review = true): {subjects}"]


def _lines_at(repo: Repo, revs: list[str], paths: list[str]) -> dict[str, set[str]]:
    """Path → every line it has in any of `revs`."""
    found: dict[str, set[str]] = {path: set() for path in paths}
    for spec, data in repo.read_blobs([f"{rev}:{path}" for rev in revs for path in paths]).items():
        found[spec.split(":", 1)[1]] |= set((data or b"").decode("utf-8", "replace").splitlines())
    return found


def _added_lines(repo: Repo, shas: list[str]) -> dict[str, dict[str, set[str]]]:
    """Commit → path → the lines it adds there (of what the agent reads and its settings)."""
    out = repo.git(
        "show", "-U0", "--no-color", "--no-renames", "--no-ext-diff", "--format=%x00%H", *shas, "--", *WATCHED
    ).decode("utf-8", "replace")
    found: dict[str, dict[str, set[str]]] = {}
    sha = path = ""
    for line in out.splitlines():
        if line.startswith("\0"):
            sha = line[1:].strip()
        elif line.startswith("+++ "):
            path = line[6:] if line.startswith("+++ b/") else line[4:]  # a quoted name: no proposal's
        elif line.startswith("+") and path and sha:
            found.setdefault(sha, {}).setdefault(path, set()).add(line[1:])
    return found


def _sizes(repo: Repo, blobs: list[str]) -> dict[str, int]:
    """Blob → its size in bytes, without reading it (`git cat-file --batch-check`)."""
    if not blobs:
        return {}
    out = repo.text("cat-file", "--batch-check", input="".join(f"{b}\n" for b in blobs).encode())
    sizes = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2].isdigit():
            sizes[parts[0]] = int(parts[2])
    return sizes
