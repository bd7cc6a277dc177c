# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash source-path=SCRIPTDIR
#
# What the bench's runs on the private cluster of tests/cluster/ share
# (lammps-cluster.sh, burst.sh): `skip REASON` exits 77 with the reason on
# stderr, which run.sh turns into a "not measured" row, and does so at
# once where the cluster needs what is not there (root);
# cluster_run_lib sources tests/cluster/lib.sh, its skip_all and bail_out
# then meaning the same.  Sets top, the source tree.
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

skip() {
	echo "$*" >&2
	exit 77
}

[ "$(id -u)" -eq 0 ] || skip "the private cluster needs root"
[ -r "$top/tests/cluster/lib.sh" ] || skip "no tests/cluster/lib.sh"

cluster_run_lib() {
	# shellcheck source=../tests/cluster/lib.sh
	. "$top/tests/cluster/lib.sh"
	# lib.sh's skip_all and bail_out print TAP and exit; here they mean
	# "no cluster run"
	# shellcheck disable=SC2317 # called by lib.sh
	skip_all() { skip "$*"; }
	# shellcheck disable=SC2317 # called by lib.sh
	bail_out() { skip "$*"; }
}
