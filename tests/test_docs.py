"""Every ```python code block of README.md and docs/*.md runs as written.

The blocks of one file run in order in one namespace (a later block may use the names of an earlier one, as a reader
who pastes them one after the other would), in a temporary working directory, with the Agg backend. Blocks in
other languages (shell commands, plain text) are not run. The directory has the repository's tests/ (a link), as a
reader who runs the snippets from a checkout has."""
import os
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
FILES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```\s*$", re.S | re.M)


def python_blocks(path):
    """[(line number, code)] of the ```python blocks of a Markdown file."""
    text = path.read_text(encoding="utf-8")
    out = []
    for m in FENCE.finditer(text):
        if m.group(1).strip().lower() in ("python", "py", "python3"):
            out.append((text.count("\n", 0, m.start(2)) + 1, m.group(2)))
    return out


def test_fence_parser():
    blocks = python_blocks(ROOT / "README.md")
    assert blocks and all("import cosim" in code or "cosim." in code for _, code in blocks[:1])


def test_docs_link_nothing_outside_the_repository():
    for path in FILES:
        text = path.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)]+)\)", text) + re.findall(r"`(\.\./[^`]*)`", text):
            if re.match(r"[a-z]+://", target):
                continue
            resolved = (path.parent / target.split("#")[0]).resolve()
            assert ROOT in resolved.parents or resolved == ROOT, f"{path.name}: link outside the repository: {target}"
            assert resolved.exists(), f"{path.name}: broken link {target}"
        assert "shared/spec" not in text and "shared/seeds" not in text, f"{path.name} points to ../shared"


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_python_blocks_run(path, tmp_path, monkeypatch):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    monkeypatch.chdir(tmp_path)
    (tmp_path / "tests").symlink_to(ROOT / "tests")   # as from the repository's root (docs/fmu.md builds test FMUs)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    ns = {"__name__": f"docs_{path.stem}"}
    for line, code in python_blocks(path):
        try:
            exec(compile(code, f"{path.name}:{line}", "exec"), ns)
        except Exception as exc:  # noqa: BLE001 - report which block failed
            pytest.fail(f"{path.name}, python block at line {line} fails: {type(exc).__name__}: {exc}")
        finally:
            plt.close("all")


def test_every_doc_with_code_has_python_blocks_or_none_at_all():
    # an untagged block that contains Python would escape the test: all Python must be tagged ```python
    for path in FILES:
        text = path.read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            if not m.group(1).strip() and re.search(r"^\s*(import |from \w+ import |\w+ = cosim\.)", m.group(2), re.M):
                pytest.fail(f"{path.name}: an untagged code block contains Python; tag it ```python")
