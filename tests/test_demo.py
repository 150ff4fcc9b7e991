"""The main job runs end to end: `python -m cosim demo --quick --out DIR` writes the table and the PNG."""
import subprocess
import sys

from cosim import demo


def test_demo_quick(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "cosim", "demo", "--quick", "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    png = out / "coupling_force.png"
    table = out / "demo_table.txt"
    assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    text = table.read_text(encoding="utf-8")
    assert text.strip() in proc.stdout  # what is printed is what is written
    rows = [line for line in text.splitlines()
            if line.strip() and line.split()[0].replace(".", "").isdigit() and len(line.split()) > 8]
    assert len(rows) == len(demo.CASES) * len(demo.SCHEMES) * len(demo.APPROXIMATIONS)
    for case in demo.CASES:
        for scheme in demo.SCHEMES:
            for label, _ in demo.APPROXIMATIONS:
                hits = [r for r in rows if f" {case['update']} " in r and f" {scheme} " in r and f" {label} " in r
                        and r.split()[0] == f"{case['H'] * 1e3:g}"]
                assert len(hits) == 1, (case, scheme, label)
                assert any(s in hits[0] for s in ("stable", "unstable", "DIVERGED"))


def test_cli_usage():
    proc = subprocess.run([sys.executable, "-m", "cosim", "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "demo" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "cosim", "nosuchcommand"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2 and "unknown command" in proc.stderr


def test_demo_figure_has_at_most_four_curves_per_panel_and_units():
    """issue 27 part 4: every panel shows one family of approximations and the reference (<= 4 curves), every
    approximation of the table is drawn once per (case, scheme), and every panel's axes are labelled with units."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    t = np.linspace(0.0, 0.1, 11)
    refs = {(c["H"], c["update"]): (t, np.sin(50 * t) * 1e4) for c in demo.CASES}
    curves = {(c["H"], c["update"], s, label): (t, np.cos(50 * t) * 1e4) for c in demo.CASES for s in demo.SCHEMES
              for label, _ in demo.APPROXIMATIONS}
    fig = demo.figure(curves, refs, 0.1)
    panels = [a for a in fig.axes if a.get_lines()]
    assert len(panels) == len(demo.CASES) * len(demo.SCHEMES) * len(demo.FAMILIES)
    curves_per_panel = [len([ln for ln in a.get_lines() if ln.get_linestyle() not in ("None", "")]) for a in panels]
    assert max(curves_per_panel) <= 4
    assert sum(curves_per_panel) == len(curves) + len(panels)        # each run once, plus one reference per panel
    assert sorted(label for _, labels in demo.FAMILIES for label in labels) == sorted(
        label for label, _ in demo.APPROXIMATIONS)
    for a in panels:
        assert a.get_ylabel().endswith("F [kN]")
    assert all(a.get_xlabel() == "t [s]" for a in panels[-len(demo.FAMILIES):])
    plt.close(fig)
