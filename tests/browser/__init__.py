"""Browser checks (a package, so that its conftest does not replace tests/conftest.py as the module `conftest`)."""
