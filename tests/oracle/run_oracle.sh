#!/bin/sh
# Runs the torch oracle with Debian's interpreter. Only /usr/bin/python3 carries
# python3-torch here (a pyenv python3 on PATH may not), so the path is fixed on purpose.
# Exit 77 (ctest SKIP_RETURN_CODE) when it is absent; torch_oracle.py does the same
# when torch or numpy cannot be imported.
PY=/usr/bin/python3
if [ ! -x "$PY" ]; then
  echo "SKIPPED: $PY not found; the oracle tests need Debian's python3 with python3-torch"
  exit 77
fi
exec "$PY" "$(dirname "$0")/torch_oracle.py" "$@"
