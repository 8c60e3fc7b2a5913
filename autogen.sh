#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Generate configure and Makefile.in from a checkout (a release tarball has them).
set -e
cd "$(dirname "$0")"
mkdir -p m4 build-aux
autoreconf --install --force
# The TAP driver that runs tests/*.bats under `make check`: automake ships it
# but installs it only on request. Makefile.am puts it in the tarball.
cp -f "$(automake --print-libdir)/tap-driver.sh" build-aux/tap-driver.sh
