"""The ``paper-results`` directive: one paper's table of tests/paper_results.toml (the single source that
tests/test_paper_results.py checks against the test suite's xfail markers)."""
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive, directives

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

SOURCE = Path(__file__).resolve().parents[2] / "tests" / "paper_results.toml"
STATUSES = ("reproduced", "partial", "not reproduced")


def load():
    with open(SOURCE, "rb") as fh:
        return tomllib.load(fh)


class PaperResults(Directive):
    required_arguments = 1
    option_spec = {"summary": directives.flag}

    def run(self):
        env = self.state.document.settings.env
        env.note_dependency(str(SOURCE))
        papers = load()
        key = self.arguments[0]
        if key not in papers:
            raise self.error(f"paper-results: no paper {key!r} in {SOURCE.name} (have {sorted(papers)})")
        rows = papers[key]["results"]
        counts = {s: sum(r["status"] == s for r in rows) for s in STATUSES}
        summary = nodes.paragraph(text=f"{papers[key]['title']}: {len(rows)} results; "
                                       + ", ".join(f"{n} {s}" for s, n in counts.items()) + ".")
        table = nodes.table(classes=["paper-results", "colwidths-given"])
        group = nodes.tgroup(cols=4)
        table += group
        for width in (24, 30, 16, 30):
            group += nodes.colspec(colwidth=width)

        def row(cells, header=False):
            r = nodes.row()
            for c in cells:
                entry = nodes.entry()
                entry += c if isinstance(c, nodes.Node) else nodes.paragraph(text=c)
                r += entry
            return r

        head = nodes.thead()
        head += row(["result", "checked by", "status", "measured in cosim"], header=True)
        group += head
        body = nodes.tbody()
        for r in rows:
            file, _, name = r["test"].partition("::")
            test = nodes.paragraph()
            test += nodes.literal(text=name)
            test += nodes.inline(text=f" in {file}", classes=["test-file"])
            status = nodes.paragraph()
            status += nodes.inline(text=r["status"], classes=["status-" + r["status"].replace(" ", "-")])
            body += row([r["result"], test, status, r.get("measured", "")])
        group += body
        return [summary, table]


def setup(app):
    app.add_directive("paper-results", PaperResults)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
