"""The skills, memo and operations the `apply_reflection` tests compose answers from.

One place for the state the tests start from and the operations they submit, so the
valid, the refused and a person's cases read the same skills and the same memo.
"""

from __future__ import annotations

from pathlib import Path

from evolve.reflect.compose import compose
from evolve.reflect.operations import SkillSnapshot
from evolve.transcripts.redact import find_invisible, find_secrets
from evolve.workspace import memo as memo_mod
from evolve.workspace.skills import parse_skill

R = "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY"
SECRETS = {
    "anthropic": "sk-ant-" + "api03-" + R * 3,
    "openai": "sk-" + "proj-" + R * 2,
    "aws": "AKIA" + "IOSFODNN7EXAMPLE",
    "github": "ghp_" + R + "Zz12",
    "private-key": "-----BEGIN " + "PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n",
    "jwt": (
        "eyJhbGciOiJIUzI1NiJ9"
        + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0"
        + ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
    ),
    "password": "DB_PASSWORD=hunter2",
}

REBASE = """---
name: git-rebase
# a person's comment, kept byte for byte
description:   Use when rebasing branches.
metadata:
  owner: "ada"
---

# Git rebase

- Never rebase a branch others have pulled.
- Always run the tests after a rebase.
"""
PINNED = '---\nname: pinned-one\ndescription: "Pinned."\nmetadata:\n  pinned: "true"\n---\n\n- keep me\n'
BROKEN = "---\nname: broken-one\n---\n\n- no description\n"
MEMO = memo_mod.render_empty("demo").replace(
    "## Strategies for this user and domain\n",
    "## Strategies for this user and domain\n\n- Use pnpm, not npm, in this repo.\n- Keep commits small.\n",
)


def snapshot(name: str, text: str) -> SkillSnapshot:
    skill = parse_skill(text, name, Path("skills", name, "SKILL.md"))
    return SkillSnapshot(skill.name, skill.valid, skill.pinned, skill.body, skill.text)


def create(name="run-tests", description="Use when finishing a change.", body="- Always run `make test`.\n"):
    return {"op": "create_skill", "name": name, "description": description, "body": body}


def patch(name="git-rebase", old="Always run the tests", new="Always run `make test`"):
    return {"op": "patch_skill", "name": name, "old": old, "new": new}


def memo_op(content="- Prefer small PRs.", section="self"):
    return {"op": "update_memo", "section": section, "content": content}


def plan_of(state, *ops, limits=None, blocked=(), summary="learn things"):
    return compose({"summary": summary, "operations": list(ops)}, state, limits, blocked)


def single_rejection(state, op, **kwargs):
    """Submit `op` beside a valid sibling: the sibling passes, `op` is refused; its reason."""
    plan = plan_of(state, op, create(name="valid-sibling", body="- Sibling rule.\n"), **kwargs)
    assert [o.name for o in plan.operations] == ["valid-sibling"]
    assert len(plan.rejected) == 1 and plan.rejected[0].op_index == 0
    reason = plan.rejected[0].reason
    assert not find_secrets(reason) and not find_invisible(reason)
    return reason
