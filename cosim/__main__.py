"""Command line: ``cosim <command> [options]`` (also ``python -m cosim``).

Commands:
  demo    the main job: two-mass oscillator, coupling approximations under Jacobi and Gauss-Seidel
          (table of errors against the monolithic solution and a PNG of the coupling force); see cosim.demo.
  run     one co-simulation described by a TOML scenario file (model, options, outputs); see cosim.cli.
  doe     a design-of-experiments study from a TOML file (factors, responses, ANOVA); see cosim.doe.config.

Options: ``--version`` prints the version, ``-h``/``--help`` this list.
"""
from __future__ import annotations

import signal
import sys
import threading

COMMANDS = {"demo": "two-mass oscillator demo: error/stability table and coupling-force figure (cosim.demo)",
            "run": "run a TOML scenario: model, options, outputs (CSV, PNG, error table; cosim.cli)",
            "doe": "run a DoE study from a TOML file: table (CSV/Parquet) and ANOVA (cosim.doe)"}


def _usage():
    lines = ["usage: cosim <command> [options]   |   cosim --version", "", "commands:"]
    lines += [f"  {name:<8}{text}" for name, text in COMMANDS.items()]
    lines += ["", "Run 'cosim <command> --help' for the options of a command."]
    return "\n".join(lines)


def main(argv=None):
    """The ``cosim`` command (``argv``: its arguments; None: the process's own, as the command itself)."""
    command = argv is None and threading.current_thread() is threading.main_thread()
    try:
        rc = _command(argv)
    except KeyboardInterrupt:
        if not command:
            raise
        rc = 130                       # a second Ctrl-C after the command had handled the first
    if rc == 130 and command:
        # interrupted, and about to exit: a further Ctrl-C while Python shuts down (its handlers already reset)
        # would kill the process with SIGINT instead of exit code 130
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    return rc


def _command(argv):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(_usage())
        return 0 if argv else 2
    if argv[0] in ("-V", "--version"):
        from . import __version__
        print(f"cosim {__version__}")
        return 0
    cmd, rest = argv[0], argv[1:]
    if cmd == "demo":
        from . import demo
        return demo.main(rest)
    if cmd == "run":
        from . import cli
        return cli.main(rest)
    if cmd == "doe":
        from . import cli
        return cli.doe_main(rest)
    print(f"cosim: unknown command {cmd!r}\n\n{_usage()}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
