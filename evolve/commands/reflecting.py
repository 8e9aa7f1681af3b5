"""`evolve reflect`: one reflection now (the schedule's gap and cap do not apply)."""

from __future__ import annotations

from evolve.commands.output import emit_json, say
from evolve.home import Home


def reflect(home: Home, name: str, dry_run: bool = False, force: bool = False, as_json: bool = False) -> int:
    from evolve.reflect.run import reflect as run_reflection

    outcome = run_reflection(home, name, force=force, dry_run=dry_run)
    if as_json:
        data = outcome.to_dict()
        if dry_run and outcome.bundle is not None:
            data["bundle_text"] = outcome.bundle.text
        emit_json(data)
        return 0 if outcome.status != "failed" else 1
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
        plan = outcome.plan
        verb = "would write" if dry_run else "wrote"
        if plan.operations:
            say(f"summary: {plan.summary}")
            for op in plan.operations:
                say(f"  {verb}: {op.kind} {op.name or op.section} ({op.path})")
        elif plan.nothing_to_save:
            say(f"nothing to save: {plan.nothing_reason or 'the model found nothing to learn'}")
    for rejected in outcome.rejected:
        say(f"  rejected: {rejected}")
    if dry_run:
        say("(dry run: nothing was changed)")
    elif outcome.status == "committed":
        say(f"committed {outcome.commit[:12] if outcome.commit else ''}: see `evolve review {name}`")
    else:
        say(f"{outcome.status}: {outcome.reason}")
    return 1 if outcome.status == "failed" else 0
