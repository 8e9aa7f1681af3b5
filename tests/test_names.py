"""Agent and skill names: valid ones pass, hostile ones are refused before touching disk."""

from __future__ import annotations

import unicodedata

import pytest

from evolve.errors import NameRefused, UserError
from evolve.home import Home
from evolve.names import check_name, name_problem
from evolve.workspace.agent import Agent

VALID = ["a", "x1", "fix-flaky-tests", "pdf2-text", "a" * 64, "0-9"]

HOSTILE = [
    "../x",
    "/etc/passwd",
    ".git/hooks/x",
    "a/../../b",
    "-rf",
    "Name",
    "name--x",
    "a" * 65,
    "x-",
    "a b",
    "a\nb",
    "a\x00b",
    ".",
    "..",
    "skills/x",
    "a_b",
    "a.b",
    "~x",
    "$HOME",
    "p\u0430ssword",  # Cyrillic 'а' looks like 'a'
    "\uff41\uff42\uff43",  # fullwidth 'abc'
    unicodedata.normalize("NFD", "caf\u00e9"),
    "caf\u00e9",
    "a\u200bb",  # zero-width space
    "ǆ",
    "ﬁx",  # compatibility forms that NFKC turns into ASCII
    "",
]


@pytest.mark.parametrize("name", VALID)
def test_valid_names(name):
    assert name_problem(name) is None
    assert check_name(name) == name


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_names_are_refused(name):
    assert name_problem(name) is not None
    with pytest.raises(NameRefused) as info:
        check_name(name, "agent")
    message = str(info.value)
    assert "agent name" in message and "\n" not in message


@pytest.mark.parametrize("name", [None, 3, b"abc", ["a"]])
def test_non_strings_are_refused(name):
    assert name_problem(name) is not None
    with pytest.raises(NameRefused):
        check_name(name)


def test_name_refused_is_a_user_error():
    assert issubclass(NameRefused, UserError)


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_agent_names_touch_nothing(evolve_home, name):
    root = evolve_home.parent
    before = sorted(root.rglob("*"))
    with pytest.raises(NameRefused):
        Agent.create(name, Home.resolve())
    with pytest.raises(NameRefused):
        Agent.open(name, Home.resolve())
    assert not evolve_home.exists(), "the home was created for a refused name"
    assert sorted(root.rglob("*")) == before


def test_hostile_skill_name_is_refused_by_agent_skill(evolve_home):
    agent = Agent.create("demo", Home.resolve())
    for name in ("../memo", "../../agents", ".git"):
        with pytest.raises(NameRefused):
            agent.skill(name)
