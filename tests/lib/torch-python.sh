#!/bin/sh
# torch-python.sh: runs a .py test with the interpreter configure found that
# can import torch; skips (77) when there is none.
if [ -z "$TORCH_PYTHON" ]; then
    echo "1..0 # SKIP no python3 with torch (scripts/setup.sh --test installs python3-torch)"
    exit 77
fi
exec "$TORCH_PYTHON" "$@"
