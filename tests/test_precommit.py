"""The agent repo's pre-commit hook, run by a person's own `git commit`."""

from __future__ import annotations

import subprocess

import pytest

from evolve.workspace import memo
from evolve.workspace.agent import Agent
from tests.helpers import commit_all, git, git_out, head, make_agent, skill_text, write_skill

BROKEN = "---\nname: other-name\ndescription: d\n---\nbody\n"


@pytest.fixture
def agent(evolve_home):
    return make_agent("demo")


def hook_path(agent: Agent):
    return agent.path / ".git" / "hooks" / "pre-commit"


def test_a_valid_skill_commits(agent):
    write_skill(agent.path, "good-one")
    proc = commit_all(agent.path, "add a skill")
    assert proc.returncode == 0
    assert git_out(agent.path, "log", "-1", "--format=%s") == "add a skill"


def test_a_broken_skill_is_refused_with_file_and_reason(agent):
    before = head(agent.path)
    write_skill(agent.path, "my-skill", text=BROKEN)
    proc = commit_all(agent.path, "broken", check=False)
    assert proc.returncode != 0
    assert "skills/my-skill/SKILL.md: name 'other-name' differs from its folder 'my-skill'" in proc.stderr
    assert "--no-verify" in proc.stderr
    assert head(agent.path) == before
    # the person's file is left exactly as they wrote it
    assert (agent.path / "skills/my-skill/SKILL.md").read_text() == BROKEN


def test_the_readme_states_the_exit_codes_as_they_are(agent):
    """C9: the README listed 65 as evolve's; the hook exits 65 and `git commit` itself exits 1."""
    from pathlib import Path

    from evolve.errors import EXIT_BUSY

    write_skill(agent.path, "my-skill", text=BROKEN)
    proc = commit_all(agent.path, "broken", check=False)
    assert proc.returncode == 1 and "this commit was refused" in proc.stderr
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    table = readme.split("### Exit codes", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1].strip() for line in table.splitlines() if line.startswith("| ")]
    assert rows == ["code", "0", "1", "2", "3", str(EXIT_BUSY), "130"]
    assert "the hook\nexits 65" in table and "`git commit` itself then exits 1" in table


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("---\nname: my-skill\ndescription: [oops\n---\nb\n", "not valid YAML"),
        ("---\nname: my-skill\n---\nb\n", "no 'description'"),
        ("no frontmatter\n", "must start with '---'"),
        (b"---\nname: my-skill\ndescription: caf\xe9\n---\nb\n", "not UTF-8"),
        ("---\nname: my-skill\ndescription: d\n---\n" + "x" * 20_010, "tokens"),
    ],
)
def test_each_kind_of_broken_skill_is_refused(agent, text, reason):
    write_skill(agent.path, "my-skill", text=text)
    proc = commit_all(agent.path, "broken", check=False)
    assert proc.returncode != 0
    assert "skills/my-skill/SKILL.md:" in proc.stderr and reason in proc.stderr


def test_a_skill_folder_without_skill_md_is_refused(agent):
    (agent.path / "skills" / "lonely").mkdir()
    (agent.path / "skills" / "lonely" / "notes.md").write_text("n\n")
    proc = commit_all(agent.path, "no skill file", check=False)
    assert proc.returncode != 0
    assert "skills/lonely/SKILL.md: SKILL.md is missing" in proc.stderr


def test_a_memo_grown_into_a_log_is_refused_in_one_line_not_parsed(agent):
    """Committed by hand, a 300 MB memo held the hook ~30 s parsing it, then listed its sections."""
    line = b"- Always run the tests before you commit; the suite catches what review misses.\n"
    with agent.memo_path.open("ab") as log:
        log.write(line * (memo.MEMO_CAP // len(line) + 1))
    size = agent.memo_path.stat().st_size
    proc = commit_all(agent.path, "my notes", check=False)
    assert proc.returncode != 0
    memo_lines = [x for x in proc.stderr.splitlines() if "memo.md" in x]
    assert len(memo_lines) == 1 and f"memo.md is {size:,} bytes, over the 1 MB" in memo_lines[0], proc.stderr


def test_no_verify_lets_it_through(agent):
    write_skill(agent.path, "my-skill", text=BROKEN)
    proc = commit_all(agent.path, "forced", no_verify=True)
    assert proc.returncode == 0
    assert git_out(agent.path, "show", "--format=", "--name-only", "HEAD") == "skills/my-skill/SKILL.md"


def test_an_over_long_memo_section_is_refused(agent):
    text = memo.replace_section(agent.memo_text(), memo.SELF, "- " + "x" * 2100)
    (agent.path / "memo.md").write_text(text)
    proc = commit_all(agent.path, "long memo", check=False)
    assert proc.returncode != 0
    assert "memo.md: memo section 'What I do well and where I often stumble' is 2102 chars" in proc.stderr
    (agent.path / "memo.md").write_text(memo.replace_section(text, memo.SELF, "- short"))
    assert commit_all(agent.path, "short memo").returncode == 0


def test_memo_cap_comes_from_the_agent_config(agent):
    with (agent.path / "agent.toml").open("a") as handle:
        handle.write("\n[limits]\nmemo_section_chars = 10\n")
    git(agent.path, "commit", "-qam", "lower cap")
    (agent.path / "memo.md").write_text(memo.replace_section(agent.memo_text(), memo.SELF, "- " + "y" * 20))
    proc = commit_all(agent.path, "memo", check=False)
    assert proc.returncode != 0 and "at most 10" in proc.stderr


def test_a_broken_skill_already_committed_does_not_block_other_files(agent):
    write_skill(agent.path, "old-broken", text=BROKEN.replace("other-name", "x-y"))
    commit_all(agent.path, "forced", no_verify=True)
    (agent.path / "notes.md").write_text("unrelated\n")
    write_skill(agent.path, "fresh")
    proc = commit_all(agent.path, "other files")
    assert proc.returncode == 0
    # deleting the broken skill is allowed too
    git(agent.path, "rm", "-rq", "skills/old-broken")
    assert git(agent.path, "commit", "-qm", "remove it").returncode == 0


def test_the_staged_content_is_checked_not_the_work_tree(agent):
    write_skill(agent.path, "my-skill", text=BROKEN)
    git(agent.path, "add", "-A")
    write_skill(agent.path, "my-skill")  # fixed on disk but not staged
    proc = git(agent.path, "commit", "-qm", "staged is broken", check=False)
    assert proc.returncode != 0
    # `git commit -a` stages the fixed file through a temporary index: accepted
    proc = git(agent.path, "commit", "-aqm", "fixed with -a", check=False)
    assert proc.returncode == 0, proc.stderr
    assert git_out(agent.path, "show", "HEAD:skills/my-skill/SKILL.md") == skill_text("my-skill").strip()


def test_commit_a_with_a_broken_edit_is_refused(agent):
    write_skill(agent.path, "my-skill")
    commit_all(agent.path, "good")
    write_skill(agent.path, "my-skill", text=BROKEN)
    proc = git(agent.path, "commit", "-aqm", "break it", check=False)
    assert proc.returncode != 0 and "differs from its folder" in proc.stderr


def test_renaming_a_folder_without_the_name_is_refused(agent):
    write_skill(agent.path, "first")
    commit_all(agent.path, "first")
    git(agent.path, "mv", "skills/first", "skills/second")
    proc = git(agent.path, "commit", "-qm", "rename", check=False)
    assert proc.returncode != 0
    assert "skills/second/SKILL.md: name 'first' differs from its folder 'second'" in proc.stderr


TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY" + "Zz12"  # built: no scanner mistakes it


def test_a_secret_in_a_persons_skill_or_memo_warns_and_commits_their_words_unchanged(agent):
    body = f"- Log in with `gh auth login --with-token <<< {TOKEN}`\n"
    write_skill(agent.path, "gh-login", body=body)
    (agent.path / "memo.md").write_text(
        agent.memo_text() + f"\n- the CI password is DB_PASSWORD=hunter2x{TOKEN[4:10]}\n"
    )
    proc = commit_all(agent.path, "my notes")
    assert proc.returncode == 0  # a warning, not a refusal
    assert (
        "warning: skills/gh-login/SKILL.md: line 6 holds what looks like a secret (github-token)"
        in proc.stderr
    )
    assert "warning: memo.md: line" in proc.stderr and "(password)" in proc.stderr
    assert TOKEN not in proc.stderr  # the warning names the kind, never the secret
    assert TOKEN in git_out(agent.path, "show", "HEAD:skills/gh-login/SKILL.md")  # their words, as written


def test_a_broken_guard_is_refused_in_one_line_and_a_good_one_commits(agent):
    guards = agent.path / "guards.toml"
    good = '[no-npm]\ntool = "Bash"\npattern = \'\\bnpm i\\b\'\naction = "deny"\nmessage = "Use pnpm."\n'
    guards.write_text(good)
    assert commit_all(agent.path, "my guard").returncode == 0
    before = head(agent.path)
    for broken, said in (
        (
            good + '[slow]\ntool = "Bash"\npattern = "(a)\\\\1"\nmessage = "m"\n',
            "guards.toml [slow]: pattern refused",
        ),
        (good + '[web]\ntool = "WebFetch"\npattern = "x"\nmessage = "m"\n', "tool 'WebFetch' is not one"),
        ('[no-npm]\ntool = "Bash\n', "guards.toml is not valid TOML"),
    ):
        guards.write_text(broken)
        proc = commit_all(agent.path, "broken guard", check=False)
        assert proc.returncode == 1 and "this commit was refused" in proc.stderr
        [line] = [x for x in proc.stderr.splitlines() if x.startswith("  ")]
        assert said in line
        assert head(agent.path) == before and guards.read_text() == broken  # their text stays theirs


def test_the_hook_asks_git_twice_however_many_files_it_checks(agent, monkeypatch, capsys):
    # what is staged, then every staged file at once (`cat-file --batch`): a process per file and
    # per check was six for a commit of the memo and one skill, each paid on a person's commit
    from evolve import precommit

    write_skill(agent.path, "one")
    write_skill(agent.path, "two", text=BROKEN.replace("other-name", "elsewhere"))
    (agent.path / "memo.md").write_text(agent.memo_text() + "\n- Use pnpm, not npm.\n")
    (agent.path / "guards.toml").write_text('[g]\ntool = "Bash"\npattern = "npm"\nmessage = "pnpm"\n')
    (agent.path / "notes\nodd.md").write_text("<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n")
    git(agent.path, "add", "-A")
    calls = []
    real = subprocess.Popen

    def counted(argv, *args, **kwargs):  # every git process, however the hook starts it
        calls.append(next(a for a in argv if a in ("diff", "cat-file")))
        return real(argv, *args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", counted)
    monkeypatch.chdir(agent.path)
    assert precommit.main() == precommit.REFUSED
    err = capsys.readouterr().err
    assert "skills/two/SKILL.md: name 'elsewhere' differs from its folder 'two'" in err
    assert "odd.md: holds merge conflict markers" in err
    assert calls == ["diff", "cat-file", "cat-file"]  # the third: a name `--batch`'s lines cannot carry


def test_the_config_is_read_only_for_a_commit_of_a_skill_or_the_memo(agent, monkeypatch):
    # its limits are all the hook takes from it: for any other commit, its import and parse
    # (~15 ms of the hook's ~60) were paid for nothing
    from evolve import config, precommit

    reads = []
    real = config.load
    monkeypatch.setattr(config, "load", lambda *paths: reads.append(paths) or real(*paths))
    monkeypatch.chdir(agent.path)
    (agent.path / "notes.md").write_text("<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n")
    git(agent.path, "add", "notes.md")
    assert precommit.main() == precommit.REFUSED and reads == []  # still checked: conflict markers
    git(agent.path, "rm", "-q", "--cached", "notes.md")
    (agent.path / "memo.md").write_text(agent.memo_text() + "\n- Use pnpm, not npm.\n")
    git(agent.path, "add", "memo.md")
    assert precommit.main() == 0 and len(reads) == 1


def test_a_file_named_like_a_stage_of_another_is_checked_as_itself(agent):
    # `:1:notes.md` is the first stage of a conflicted notes.md, not the file "1:notes.md": its
    # conflict markers went through unread
    before = head(agent.path)
    (agent.path / "1:notes.md").write_text("<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n")
    proc = commit_all(agent.path, "notes", check=False)
    assert proc.returncode != 0 and "1:notes.md: holds merge conflict markers" in proc.stderr
    assert head(agent.path) == before


def test_a_name_ending_in_a_carriage_return_is_checked_as_itself(agent):
    # `cat-file --batch` drops a line's trailing CR: `notes.md\r` was read as `notes.md` (clean)
    # or as missing, and its conflict markers reached the branch
    (agent.path / "notes.md").write_text("clean\n")
    (agent.path / "notes.md\r").write_text("<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n")
    (agent.path / "alone\r").write_text("<<<<<<< ours\nc\n=======\nd\n>>>>>>> theirs\n")
    proc = commit_all(agent.path, "odd names", check=False)
    assert proc.returncode != 0
    # named with the CR shown, which printed as it is sent the line's start back over the name
    assert "  notes.md\\r: holds merge conflict markers" in proc.stderr
    assert "  alone\\r: holds merge conflict markers" in proc.stderr


def test_big_binary_files_are_not_held_in_memory_at_once(agent, monkeypatch):
    # the one `cat-file --batch` answer held every staged file at once, and each again as its own
    # bytes: 600 MB staged took 1.2 GB. A binary file's head is all the conflict check reads
    import os
    import tracemalloc

    from evolve import precommit

    for number in range(4):
        (agent.path / f"data{number}.bin").write_bytes(b"\0" + os.urandom(8 << 20))
    (agent.path / "after.md").write_text("<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n")
    (agent.path / "cases").mkdir(exist_ok=True)
    git(agent.path, "add", "-A")
    monkeypatch.chdir(agent.path)
    names = precommit._staged_names(agent.path)
    tracemalloc.start()
    try:
        staged = precommit.Staged(agent.path, names, ["data3.bin"])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 << 20  # one file whole (asked for), the others their head: not 32 MB twice
    assert len(staged["data0.bin"]) == precommit.PROBE and len(staged["data3.bin"]) == (8 << 20) + 1
    assert staged["after.md"].startswith(b"<<<<<<< ours")  # read past the ones skipped
    assert precommit.main() == precommit.REFUSED


def test_big_text_files_are_checked_one_at_a_time(agent, monkeypatch):
    # every staged text file was held whole until the checks ran: four of 8 MB, 32 MB at once
    import tracemalloc

    from evolve import precommit

    line = "a line of notes, nothing to resolve\n"
    for number in range(4):
        (agent.path / f"notes{number}.md").write_text(line * ((8 << 20) // len(line)))
    (agent.path / "notes4.md").write_text("<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n" + line * 1000)
    git(agent.path, "add", "-A")
    monkeypatch.chdir(agent.path)
    names = precommit._staged_names(agent.path)
    tracemalloc.start()
    try:
        staged = precommit.Staged(agent.path, names)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 12 << 20, peak  # one file at a time
    assert [staged.conflicted(f"notes{n}.md") for n in range(5)] == [False, False, False, False, True]
    assert all(len(staged[f"notes{n}.md"]) == precommit.PROBE for n in range(5))
    assert precommit.main() == precommit.REFUSED


def stage_a_damaged_object(repo):
    """Stage notes.md, then zero 64 bytes inside its object: git streams its start and stops."""
    import random

    rng = random.Random(7)
    (repo / "notes.md").write_text("".join(rng.choice("abcdef \n") for _ in range(200_000)))
    git(repo, "add", "notes.md")
    blob = git_out(repo, "rev-parse", ":notes.md")
    loose = repo / ".git" / "objects" / blob[:2] / blob[2:]
    data = bytearray(loose.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 64] = bytes(64)
    loose.chmod(0o644)
    loose.write_bytes(bytes(data))


def test_an_object_git_cannot_read_to_its_end_is_gits_error_not_a_crash(agent, monkeypatch):
    # git wrote the header of a damaged object, then stopped: the buffer being filled could not
    # be cut while it was in use (BufferError), where git's own words were meant
    from evolve import precommit
    from evolve.store.git import GitError

    stage_a_damaged_object(agent.path)
    monkeypatch.chdir(agent.path)
    with pytest.raises(GitError) as raised:
        precommit.Staged(agent.path, ["notes.md"])
    assert "unable to stream" in raised.value.stderr  # git names the object it could not read


@pytest.mark.parametrize("path", ["notes/deploy.md", "memo.md", "skills/deploy/SKILL.md"])
def test_a_merge_conflict_inside_a_code_block_is_refused_in_the_merge(agent, path):
    # git marks a conflict of lines inside a fence inside the fence: the check took it for an
    # example of markers, and the merge was committed with both sides in the file
    start = {
        "memo.md": agent.memo_text(),
        "skills/deploy/SKILL.md": skill_text("deploy", "Deploy the app."),
    }.get(path, "# Deploy\n")
    target = agent.path / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(start + "\n```sh\nmake deploy\n```\n")
    commit_all(agent.path, "base")
    git(agent.path, "checkout", "-q", "-b", "side")
    target.write_text(start + "\n```sh\nmake deploy ENV=staging\n```\n")
    commit_all(agent.path, "side")
    git(agent.path, "checkout", "-q", "main")
    target.write_text(start + "\n```sh\nmake deploy ENV=prod\n```\n")
    commit_all(agent.path, "main")
    assert git(agent.path, "merge", "-q", "side", check=False).returncode != 0  # a conflict
    assert "<<<<<<< HEAD\nmake deploy ENV=prod\n=======" in target.read_text()
    proc = commit_all(agent.path, "merged", check=False)
    assert proc.returncode != 0 and f"{path}: holds merge conflict markers" in proc.stderr, proc.stderr
    assert proc.stderr.count("conflict markers") == 1
    git(agent.path, "merge", "--abort")
    # outside a merge, the same block is an example of markers and is committed
    target.write_text(target.read_text() + "\n```\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> side\n```\n")
    assert commit_all(agent.path, "an example", check=False).returncode == 0


def test_a_check_that_fails_lets_the_commit_through_and_says_so(agent):
    # the hook said "evolve: not installed at … any more" of an evolve that was there and failed
    stage_a_damaged_object(agent.path)
    proc = git(agent.path, "commit", "-q", "-m", "notes", check=False)
    assert "not installed" not in proc.stderr
    said = "evolve: the check of this commit failed (exit 1; what it said is above)"
    assert said in proc.stderr, proc.stderr


def test_a_skill_with_a_nul_early_is_still_checked_whole(agent):
    # binary files are read only as far as tells them binary; a SKILL.md is parsed, so read whole
    text = "---\nname: my-skill\ndescription: d\n---\n\0" + "x" * 20_010
    write_skill(agent.path, "my-skill", text=text)
    proc = commit_all(agent.path, "long", check=False)
    assert proc.returncode != 0 and "skills/my-skill/SKILL.md:" in proc.stderr and "tokens" in proc.stderr


def test_a_conflict_with_the_persons_marker_size_is_refused(agent):
    # `conflict-marker-size=10` in the person's .gitattributes: git writes ten-character markers,
    # which the check (seven exactly) let through to the memo the agent reads
    (agent.path / ".gitattributes").write_text("*.md conflict-marker-size=10\n")
    target = agent.path / "memo.md"
    target.write_text(agent.memo_text() + "\n- deploy with make deploy\n")
    commit_all(agent.path, "base")
    git(agent.path, "checkout", "-q", "-b", "side")
    target.write_text(agent.memo_text().replace("make deploy", "make deploy ENV=staging"))
    commit_all(agent.path, "side")
    git(agent.path, "checkout", "-q", "main")
    target.write_text(agent.memo_text().replace("make deploy", "make deploy ENV=prod"))
    commit_all(agent.path, "main")
    assert git(agent.path, "merge", "-q", "side", check=False).returncode != 0  # a conflict
    assert "<<<<<<<<<< HEAD\n" in target.read_text()
    proc = commit_all(agent.path, "merged", check=False)
    assert proc.returncode != 0 and "memo.md holds merge conflict markers" in proc.stderr, proc.stderr
