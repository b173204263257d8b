"""Print the office suites' template table of docs/office.md (what each app's templates are,
their skills, seeds and phrasings): `.venv/bin/python scripts/office_table.py`, then paste it
between the docs' office-table markers (tests/envs/computer/office/test_suite.py checks it)."""

from palaestra.envs.computer.office import suite


def table() -> str:
    out, total = [], 0
    for app in ("calc", "writer", "impress"):
        templates = suite.templates(app)
        tasks = sum(len(t.seeds) for t in templates)
        total += tasks
        out += [f"\n**{app.capitalize()}** ({len(templates)} templates, {tasks} tasks)\n"]
        out += ["| template | skills | seeds | phrasings |", "|---|---|---|---|"]
        out += [
            f"| `{t.name}` | {', '.join(t.skills)} | {len(t.seeds)} | {len(t.phrasings)} |"
            for t in templates
        ]
    head = f"The candidates: {total} tasks from the templates below (skills are private labels)."
    return head + "\n" + "\n".join(out) + "\n"


if __name__ == "__main__":
    print(table(), end="")
