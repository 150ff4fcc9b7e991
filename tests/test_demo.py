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
