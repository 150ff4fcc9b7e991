"""Seconds from SIGINT to KeyboardInterrupt for the long calls of issue 30 (part 1).

Each case runs in a child process; the parent sends SIGINT `DELAY` s after the child says it started and the child
prints the time (CLOCK_MONOTONIC, shared by both processes) at which it caught KeyboardInterrupt. A child still
running `CAP` s after the signal is killed and reported as "> CAP".

    python benchmarks/sigint_latency.py [CAP]
"""
import os
import signal
import subprocess
import sys
import textwrap
import time

DELAY = float(os.environ.get("SIGINT_DELAY", "1.0"))
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CASES = {
    "Stepper.do_step(0, 1e5) CVODE": """
        st = cosim.Stepper(cosim.models.two_mass_oscillator().subsystems[0], cosim.CVODE(rtol=1e-12, max_steps=10**9))
        go(lambda: st.do_step(0.0, 1e5, [0.0]))""",
    "simulate(two_mass, 1e5, 2.5e4) CVODE rtol 1e-12": """
        go(lambda: cosim.simulate(cosim.models.two_mass_oscillator(), 1e5, 2.5e4, solver=cosim.CVODE(rtol=1e-12, max_steps=10**9)))""",
    "simulate(two_mass, 1e3, 0.1) RK4 substeps 2e5": """
        go(lambda: cosim.simulate(cosim.models.two_mass_oscillator(), 1e3, 1e-1, solver=cosim.RK4(substeps=200000)))""",
    "two_mass_stability_map 400^3 threads=1": """
        import numpy as np
        g = np.logspace(2, 6, 400)
        go(lambda: cosim.analysis.two_mass_stability_map(g, g, np.logspace(-4, -1, 400), threads=1))""",
    "two_mass_stability_map 400^3 threads=2": """
        import numpy as np
        g = np.logspace(2, 6, 400)
        go(lambda: cosim.analysis.two_mass_stability_map(g, g, np.logspace(-4, -1, 400), threads=2))""",
}

PRELUDE = """
import sys, time, cosim
def go(call):
    print("start", flush=True)
    try:
        call()
        print("finished", flush=True)
    except KeyboardInterrupt as e:
        print("interrupted", time.monotonic(), hasattr(e, "result"), flush=True)
"""


def latency(body, cap):
    code = PRELUDE + textwrap.dedent(body)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    assert p.stdout.readline().strip() == "start"
    time.sleep(DELAY)
    sent = time.monotonic()
    p.send_signal(signal.SIGINT)
    try:
        out, _ = p.communicate(timeout=cap)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        return f"> {cap:.0f} s"
    words = out.split()
    if not words or words[0] != "interrupted":
        return f"did not raise KeyboardInterrupt: {out!r}"
    return f"{float(words[1]) - sent:.3f} s (result attached: {words[2]})"


if __name__ == "__main__":
    cap = float(sys.argv[1]) if len(sys.argv) > 1 else 120.0
    for name, body in CASES.items():
        print(f"{name:50s} {latency(body, cap)}", flush=True)
