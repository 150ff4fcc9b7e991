"""Checks in headless Chromium (make docs-check, make browser-test)."""
