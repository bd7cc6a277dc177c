#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Make ./configure from configure.ac (needs autoconf, automake, libtool).
set -e
cd "$(dirname "$0")"
autoreconf -fi
