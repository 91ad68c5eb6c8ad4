#!/bin/sh
# autogen.sh: regenerate configure and Makefile.in (needs autoconf, automake,
# pkg-config; scripts/setup.sh installs them).
set -e
cd "$(dirname "$0")"
autoreconf --install --force
