#!/bin/sh
# Generate configure and Makefile.in from a checkout (a release tarball has them).
set -e
cd "$(dirname "$0")"
mkdir -p m4 build-aux
autoreconf --install --force
