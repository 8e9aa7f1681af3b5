"""`evolve reflect`: one reflection now (the schedule's gap and cap do not apply)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evolve.commands.output import emit_json, say
from evolve.errors import EXIT_BUSY, EXIT_USER
from evolve.home import Home
from evolve.workspace.agent import Agent

if TYPE_CHECKING:
    from evolve.reflect.run import Outcome


def reflect(home: Home, name: str, dry_run: bool = False, force: bool = False, as_json: bool = False) -> int:
    from evolve.commands.observing import catch_up
    from evolve.reflect.run import reflect as run_reflection

    Agent.open(name, home)  # a name that is no agent says so before anything is read
    catch_up(home, [name])
    outcome = run_reflection(home, name, force=force, dry_run=dry_run)
    code = EXIT_BUSY if outcome.status == "busy" else EXIT_USER if outcome.status == "failed" else 0
    if as_json:
        data = outcome.to_dict()
        if dry_run and outcome.bundle is not None:
            data["bundle_text"] = outcome.bundle.text
        emit_json(data)
        return code
    if dry_run and outcome.bundle is not None:
        bundle = outcome.bundle
        say(bundle.text.rstrip())
        say(
            f"\n--- bundle: {bundle.tokens} tokens of {bundle.budget} "
            f"({len(bundle.runs)} of {bundle.candidates} runs) ---"
        )
        shown = bundle.evidence()
        say(
            f"--- shown: {shown['errors_with_cause']} of {shown['real_errors']} real errors with a cause, "
            f"{shown['user_words_shown']} of {shown['user_words']} user words, "
            f"{shown['redactions']} redactions ---"
        )
    if outcome.plan is not None:
        _print_plan(outcome, dry_run)
    if dry_run:
        if outcome.status == "failed":
            say(f"the model call failed: {outcome.reason}")
        elif outcome.status != "dry-run":
            say(f"{outcome.status}: {outcome.reason}")
        say("(dry run: nothing was changed)")
    elif outcome.status in ("committed", "proposed"):
        if outcome.commit:
            say(f"committed {outcome.commit[:12]}: see `evolve review {name}`")
        if outcome.proposal:
            proposal = outcome.proposal.removeprefix("proposals/")
            say(
                f"waiting for review on {outcome.proposal}: `evolve review {name} {proposal}`, then "
                f"`evolve accept` or `evolve reject`"
            )
    elif not (outcome.status == "nothing" and outcome.plan is not None and outcome.plan.nothing_to_save):
        say(f"{outcome.status}: {outcome.reason}")  # (the plan's "nothing to save" said it already)
    return code


def _print_plan(outcome: Outcome, dry_run: bool) -> None:
    """One line per operation of the answer, saying what became of it (and of evictions)."""
    from evolve.reflect.operations import kept_note

    plan = outcome.plan
    assert plan is not None
    if plan.nothing_to_save:
        say(f"nothing to save: {plan.nothing_reason or 'the model found nothing to learn'}")
        return
    say(f"summary: {plan.summary}")
    words = {
        "would land": "would land",
        "landed": "landed",
        "waiting": "waits for review" if dry_run else "waiting for review",
        "proposed": "proposed for review",
        "rejected": "rejected",
        "unchanged": "unchanged",
        "not written": "not written",
    }
    for row in outcome.operations():
        target = f"{row['op']} {row['target']}".strip()
        where = f" ({row['path']})" if row["status"] in ("landed", "would land", "proposed") else ""
        notes = [kept_note(row["kept"])] if isinstance(row["kept"], int) and row["kept"] else []
        notes += [f"left out {row['left_out']} line(s) a person undid"] if row["left_out"] else []
        notes += [f"its eval case in {row['eval']}"] if row.get("eval") else []
        notes += [f"its eval case was refused: {row['eval_refused']}"] if row.get("eval_refused") else []
        detail = f": {row['reason']}" if row["reason"] else ""
        say(
            f"  {words[str(row['status'])]}: {target}{where}{detail}"
            + (f" — {'; '.join(notes)}" if notes else "")
        )
    for name in outcome.evicted:
        say(f"  evicted: {name} (over max_skills; the least used that no person wrote in)")
    for name in outcome.evictions_waiting:
        say(f"  waiting for review: evict {name} (over max_skills; with a remote, eviction waits)")
