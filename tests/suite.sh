#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The whole test suite, from a fresh Debian 12 machine (as root):
#
#   bash tests/suite.sh
#
# installs what it needs, fetches the matching Slurm source for the jobcomp
# plugin, makes the container images, builds with gcc and runs its unit
# tests, builds Slurm 24.11 and lwm2 against it, runs the integration tests
# on a private cluster of each Slurm version side by side (one cluster per
# version for all its tests), builds with clang and with ASan+UBSan and
# runs their unit tests (warnings are errors), checks formatting and the
# shell scripts, analyses the C sources (cppcheck, tests/cppcheck.sh, and
# clang's scan-build, tests/scan-build.sh, over the clang build), runs
# `make distcheck`, and
# builds the packages.  Every test point counts;
# the last line is "N passed, N failed, N skipped".  Before it, the skipped
# points are listed by reason (the text of their TAP "# SKIP" lines, with
# the stages that skipped them), so that a test the host could not run (no
# GPU, no PMU, ...) is seen in the output and not only counted; after it,
# the time of each stage (each test's is on its line).
#
# Environment: LWM2_SUITE_DIR (scratch, default _build/suite in the tree),
# LWM2_SUITE_SKIP (space-separated stage names to leave out, e.g. "distcheck
# asan"), LWM2_SUITE_ONLY (run only these stages), LWM2_SUITE_TESTS (run
# only these integration tests, e.g. "t-report.sh t-grid.sh").
#
# The images stage makes the Debian 11 and 12 root file systems of the
# container test (tests/containers/image.sh) once per machine, under
# /var/cache/lwm2-suite/images.
#
# The deb and rpm stages build the packages from the `make dist` tarball;
# deb installs them, runs tests/integration/t-packages.sh against the
# installed paths and removes them again.  slurm24 builds Slurm 24.11 from
# Debian 13's source into LWM2_SLURM24_DIR (default
# /var/cache/lwm2-suite/slurm24, reused by every later run on the machine)
# and lwm2 against it; integration24 runs the
# integration tests on a cluster of those daemons.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
work=${LWM2_SUITE_DIR:-$top/_build/suite}
logs=$work/logs
mkdir -p "$logs"
rm -f "$work/failed-diag"
cd "$top" || exit 1

passed=0
failed=0
skipped=0
failures=()
# what went wrong and was overcome (a cluster started again), said at the end
notes=()
suite_start=$(date +%s)

say() { printf 'suite: %s\n' "$*"; }

wanted() {
	local s
	for s in ${LWM2_SUITE_SKIP:-}; do [ "$s" = "$1" ] && return 1; done
	[ -z "${LWM2_SUITE_ONLY:-}" ] && return 0
	for s in $LWM2_SUITE_ONLY; do [ "$s" = "$1" ] && return 0; done
	return 1
}

count_pass() { passed=$((passed + 1)); }
count_fail() { failed=$((failed + 1)); failures+=("$1"); }
count_skip() { skipped=$((skipped + 1)); }

# note_skips LABEL LOG...: the reasons of the skipped TAP points in the
# logs, one "LABEL<tab>reason" line each into $work/skips.  The reason is
# what follows "# SKIP", else the point's description; a whole script
# skipped ("1..0 # SKIP why") counts once.
skips_file=$work/skips
: >"$skips_file"
note_skips() {
	local label=$1
	shift
	[ $# -gt 0 ] || return 0
	awk -v label="$label" '
		/^ok [0-9]+.*# *(SKIP|skip)/ || /^1\.\.0 *# *(SKIP|skip)/ {
			line = $0
			why = line
			sub(/^.*# *(SKIP|skip)[[:space:]]*/, "", why)
			if (why == "") {
				why = line
				sub(/^ok [0-9]+ *-? */, "", why)
				sub(/ *# *(SKIP|skip).*$/, "", why)
			}
			if (why == "") why = "(no reason given)"
			print label "\t" why
		}' "$@" >>"$skips_file" 2>/dev/null
}

# The skipped points grouped by reason, most frequent first.
# The reasons that many cases of one test give with the same ending
# ("case: needs X") are said once, with their count, so that the summary
# stays short at the end of the output (what CI shows).
skip_summary() {
	[ -s "$skips_file" ] || return 0
	say "skipped, by reason:"
	awk -F '\t' '
		function add(key, label) {
			n[key]++
			if (index(" " st[key] ", ", " " label ", ") == 0)
				st[key] = st[key] (st[key] == "" ? "" : ", ") label
		}
		{ r[NR] = $2; l[NR] = $1; e = $2; sub(/.*: /, "", e); end[NR] = e
		  if (!((e, $2) in seen)) { seen[e, $2] = 1; kinds[e]++ } }
		END {
			for (i = 1; i <= NR; i++)
				add(kinds[end[i]] > 3 ? end[i] " (" kinds[end[i]] " cases)" : r[i], l[i])
			for (k in n) printf "%6d  %s  [%s]\n", n[k], k, st[k]
		}' "$skips_file" |
		sort -k1,1nr -k2
}

# step NAME CMD...: one test point for a whole command (a build, a check).
step() {
	local name=$1 t0 rc
	shift
	t0=$(date +%s)
	"$@" >"$logs/$name.log" 2>&1
	rc=$?
	if [ $rc -eq 0 ]; then
		count_pass
		say "ok   $name ($(($(date +%s) - t0)) s)"
	else
		count_fail "$name"
		say "FAIL $name ($(($(date +%s) - t0)) s), last lines of $logs/$name.log:"
		tail -n 25 "$logs/$name.log" | sed 's/^/    /'
	fi
	return $rc
}

# Add the results of Automake's TAP driver (.trs files) under DIR.
count_trs() {
	local dir=$1 label=$2 p f s
	p=$(find "$dir" -name '*.trs' -exec grep -h '^:test-result: PASS' {} + 2>/dev/null | wc -l)
	f=$(find "$dir" -name '*.trs' -exec grep -hE '^:test-result: (FAIL|ERROR|XPASS)' {} + 2>/dev/null | wc -l)
	s=$(find "$dir" -name '*.trs' -exec grep -hE '^:test-result: (SKIP|XFAIL)' {} + 2>/dev/null | wc -l)
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
	say "     $label: $p passed, $f failed, $s skipped"
	local logs_of_trs=()
	mapfile -t logs_of_trs < <(find "$dir" -name '*.trs' 2>/dev/null | sed 's/\.trs$/.log/')
	note_skips "$label" "${logs_of_trs[@]}"
	if [ "$f" -gt 0 ]; then
		local trs
		while IFS= read -r trs; do
			failures+=("$label: ${trs#"$dir"/}")
			say "     failed: ${trs#"$dir"/} (log: ${trs%.trs}.log)"
			# The failed points and the lines just before each (a test's
			# diagnostics): CI shows this output only, not the logs.
			grep -B3 -E '^(not ok|ERROR:|Bail out!)' "${trs%.trs}.log" 2>/dev/null |
				grep -vE '^(PASS|SKIP|FAIL|XFAIL|XPASS|ERROR): ' | head -n 40 | sed 's/^/         /'
		done < <(grep -lE '^:test-result: (FAIL|ERROR|XPASS)' -r --include='*.trs' "$dir")
	fi
}

# Count a TAP stream's test points; a script that dies early or prints no
# plan counts as one failure.  SECONDS, when given, is how long it ran.
count_tap() {
	local log=$1 label=$2 rc=$3 took=${4:+ ($4 s)} p f s plan
	p=$(grep -cE '^ok [0-9]+( |$)' "$log" | tr -d ' ')
	s=$(grep -cE '^ok [0-9]+ .*# *(SKIP|skip)' "$log" | tr -d ' ')
	p=$((p - s))
	f=$(grep -cE '^not ok [0-9]+' "$log" | tr -d ' ')
	plan=$(grep -cE '^1\.\.[0-9]+' "$log" | tr -d ' ')
	# "1..0 # SKIP why": the whole script was skipped; it counts as one.
	if grep -qE '^1\.\.0 *# *SKIP' "$log"; then
		s=$((s + 1))
		grep -E '^1\.\.0' "$log" | sed 's/^/    /'
	fi
	passed=$((passed + p))
	skipped=$((skipped + s))
	failed=$((failed + f))
	note_skips "$label" "$log"
	if [ "$f" -gt 0 ]; then
		failures+=("$label")
		grep -E '^not ok' "$log" | sed 's/^/    /'
		# each failed case with the first lines of what it said, for
		# the end of the output
		{
			echo "$label:"
			awk '/^not ok [0-9]+/ { print "    " $0; n = 6; next }
			     n > 0 && /^#/ { print "      " substr($0, 1, 300); n--; next }
			     { n = 0 }' "$log"
		} >>"$work/failed-diag"
	fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] || [ "$plan" -eq 0 ]; then
		failed=$((failed + 1))
		failures+=("$label (exit $rc)")
		tail -n 15 "$log" | sed 's/^/    /'
	fi
	say "     $label: $p passed, $f failed, $s skipped$took"
}

# run_tap LOG LABEL CMD...: run a TAP script (at most 15 minutes) into LOG
# and count it, with its time.
run_tap() {
	local log=$1 label=$2 t0 rc
	shift 2
	t0=$(date +%s)
	timeout 900 "$@" >"$log" 2>&1
	rc=$?
	count_tap "$log" "$label" "$rc" "$(($(date +%s) - t0))"
}

slurm_source=""
configure_common=(--enable-werror)

stage_deps() {
	step install-deps bash contrib/install-deps.sh || return 1
}

stage_slurm_source() {
	local out
	if step slurm-source bash contrib/slurm-source.sh "$work/slurm-src"; then
		out=$(tail -n 1 "$logs/slurm-source.log")
		# SLURM_SOURCE=<dir> SLURM_BUILD=<dir>
		local src=${out#SLURM_SOURCE=}
		src=${src%% *}
		local build=${out##*SLURM_BUILD=}
		slurm_source="$src:$build"
	fi
}

stage_autogen() {
	step autogen ./autogen.sh || return 1
}

# build_and_check NAME CONFIGURE-ARGS...: a build directory of its own.
build_and_check() {
	local name=$1
	shift
	local dir=$work/build-$name
	rm -rf "$dir"
	mkdir -p "$dir"
	step "configure-$name" bash -c "cd '$dir' && '$top/configure' $*" || return 1
	step "build-$name" make -C "$dir" -j2 || return 1
	# -k: a failing directory must not hide the tests of the others.
	step "check-$name" make -C "$dir" -k -j2 check
	count_trs "$dir" "unit tests ($name)"
}

stage_gcc() {
	local extra=()
	[ -n "$slurm_source" ] && extra+=(--with-slurm-source="$slurm_source")
	build_and_check gcc CC=gcc "${configure_common[@]}" "${extra[@]}"
}

# The fuzz targets are built with clang's libFuzzer whatever CC is: the
# same programs in every build.  The gcc stage fuzzes them for their time
# (digest/test/fuzz.sh, 10 s a target); the clang, asan and distcheck
# builds run a few thousand inputs each, enough to see them build and run.
fuzz_briefly=2000

# One clang build serves both: clang's analyzer runs over it as it is made
# (tests/scan-build.sh; every finding fails), and the unit tests run in it.
scan_build() {
	LWM2_SLURM_SOURCE="$slurm_source" LWM2_SUITE_DIR="$work" \
		bash tests/scan-build.sh "$work/build-clang"
}

# The analyzer's build only compiles (no test runs in it): it is started at
# nice 19 beside the integration stage, whose tests mostly wait on Slurm,
# and the clang stage waits for it.  The scheduler gives the tests and the
# daemons the CPU whenever they want it; the tests that time things
# (integration_exclusive) wait until it is done, as they wait for the
# other tests.
scan_build_pid=
scan_build_start() {
	wanted clang || return 0
	(
		# what it starts inherits the niceness; the lock shared, as a
		# test's, so that the tests that time things wait for it
		renice -n 19 -p "$BASHPID" >/dev/null
		integration_lock_take --shared
		scan_build 8>&- 9>&-
	) >"$logs/scan-build-beside.log" 2>&1 8>>"$integration_turnstile" 9>>"$integration_lock" &
	scan_build_pid=$!
	say "     scan-build: the clang stage's build started beside these (nice 19)"
}

scan_build_join() {
	local rc=0
	wait "$scan_build_pid" || rc=$?
	cat "$logs/scan-build-beside.log"
	return "$rc"
}

stage_clang() {
	local dir=$work/build-clang
	if [ -n "$scan_build_pid" ]; then
		step scan-build scan_build_join
	else
		step scan-build scan_build
	fi
	[ -f "$dir/build/Makefile" ] || return 1
	# The Makefiles name scan-build's compiler wrapper: outside scan-build
	# it compiles with CCC_CC (what the tests compile as they run).
	CCC_CC=clang LWM2_FUZZ_RUNS=$fuzz_briefly step check-clang make -C "$dir/build" -k -j2 check
	count_trs "$dir/build" "unit tests (clang)"
}

stage_asan() {
	# The sanitized liblwm2.so is preloaded into programs that are not
	# sanitized: its runtime then cannot come first in the link order.
	ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 LWM2_FUZZ_RUNS=$fuzz_briefly \
		build_and_check asan CC=gcc --enable-sanitizer=address,undefined "${configure_common[@]}"
}

stage_lint() {
	step format-check bash -c "git ls-files '*.c' '*.h' | xargs -r clang-format --dry-run --Werror"
	step shellcheck bash -c "git ls-files '*.sh' .ci/run contrib/lwm2-mail | xargs -r shellcheck -x -S warning"
	# every finding fails; the ones that stay are in tests/cppcheck.supp
	step cppcheck bash tests/cppcheck.sh
	# digest/'s folders are layers: no include against their order
	step layers bash tests/layers.sh
}

# settle_cluster DIR TEST: jobs a test left behind (a step whose MPI
# start-up crashed on one node can leave its ranks on the other waiting)
# are cancelled, so that the next test finds the nodes idle; said in the
# log.
settle_cluster() {
	(
		eval "$(bash tests/cluster/cluster.sh env "$1" 2>/dev/null)" || exit 0
		left=$(squeue -h -o %i 2>/dev/null | tr '\n' ' ')
		left=${left% }
		[ -n "$left" ] || exit 0
		say "     $2 left jobs $left running: cancelled"
		scancel $left 2>/dev/null
		for ((i = 0; i < 120; i++)); do
			[ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
			sleep 0.5
		done
	)
	# A test that exits with the shared cluster still reconfigured (its
	# jobcomp, its plugstack) would change the ones after it: put the start
	# configuration back and say which test left it.
	if [ -f "$1/etc/current.env" ] && ! cmp -s "$1/etc/start.env" "$1/etc/current.env"; then
		say "     $2 left the cluster reconfigured: start configuration restored"
		(
			# shellcheck disable=SC1091
			. "$1/etc/start.env"
			bash tests/cluster/cluster.sh reconfig "$1"
		) >/dev/null 2>&1
	fi
}

# The integration tests run on the two Slurm versions side by side, each
# on a cluster of its own (cluster.sh: ports, cgroups, state and job ids of
# its own): they mostly wait on Slurm, and a run of them keeps the CPUs a
# few per cent busy.  The tests that need the machine to themselves (times
# measured against each other, a node slowed through the machine's
# cgroups, the users' shared mailboxes) take the lock alone; the others
# share it.
integration_exclusive="t-grid.sh t-live.sh t-jobcomp-mail-mta.sh"
integration_lock=$work/integration.lock
integration_turnstile=$work/integration.turnstile

# integration_lock_take MODE: the lock on descriptor 9 (MODE --shared or
# --exclusive) through the turnstile on descriptor 8.  A test that needs
# the machine alone holds the turnstile while it waits for the running
# ones, so that no test starts meanwhile: with the lock alone, the other
# version's tests took it shared one after another and kept such a test
# waiting (10 minutes once).
integration_lock_take() {
	flock --exclusive 8
	flock "$1" 9
	flock --unlock 8
}

# integration_test TEST LOG LABEL CLUSTER: one test on the running cluster
# under the lock, then the cluster settled for the next.  The test and the
# daemons it may restart do not inherit the lock's descriptor.
integration_test() {
	local t=$1 log=$2 label=$3 cluster=$4 mode=--shared
	case " $integration_exclusive " in
	*" $(basename "$t") "*) mode=--exclusive ;;
	esac
	{
		integration_lock_take "$mode"
		run_tap "$log" "$label" bash "$t" 8>&- 9>&-
		settle_cluster "$cluster" "$label" 8>&- 9>&-
	} 8>>"$integration_turnstile" 9>>"$integration_lock"
}

# cluster_start CLUSTER NAME: the private cluster of a stage's tests.  A
# start that fails (a daemon not ready in time while the other version's
# cluster starts beside it) is said with its reason, its daemons' logs kept
# in $logs/NAME-start-failed, and tried once more: only a second failure
# fails the stage, and the first is listed in the notes at the end either
# way (CI shows the end of this output, not the logs).
cluster_start() {
	local cluster=$1 name=$2 t0 try reason=
	t0=$(date +%s)
	rm -f "$logs/$name-start.why"
	for try in 1 2; do
		if bash tests/cluster/cluster.sh start "$cluster" >"$logs/$name-start.log" 2>&1; then
			count_pass
			say "ok   $name-start ($(($(date +%s) - t0)) s)"
			[ -z "$reason" ] || notes+=("$name-start: started at the second try; the first: $reason")
			return 0
		fi
		reason=$(grep -m1 -E '^cluster: (start: |.*: (its daemon exited|not ready after))' "$logs/$name-start.log" ||
			tail -n 1 "$logs/$name-start.log")
		say "     $name-start: try $try failed ($(($(date +%s) - t0)) s), last lines of its log:"
		tail -n 25 "$logs/$name-start.log" | sed 's/^/    /'
		rm -rf "$logs/$name-start-failed"
		cp -r "$cluster/log" "$logs/$name-start-failed" 2>/dev/null
		cp "$logs/$name-start.log" "$logs/$name-start-failed/" 2>/dev/null
		{
			echo "try $try:"
			tail -n 30 "$logs/$name-start.log"
		} >>"$logs/$name-start.why"
		bash tests/cluster/cluster.sh stop "$cluster" >/dev/null 2>&1
		# the next try from nothing: whatever the failed one left (a
		# database half made) is not what makes it fail again
		rm -rf "$cluster"
	done
	count_fail "$name-start: $reason"
	mv "$logs/$name-start.why" "$logs/$name-start-failed/why" 2>/dev/null
	return 1
}

# The integration tests in the order they run: those that share the
# machine, then those that need it alone.
integration_order() {
	local t
	for t in tests/integration/t-*.sh; do
		case " $integration_exclusive " in *" $(basename "$t") "*) ;; *) echo "$t" ;; esac
	done
	for t in tests/integration/t-*.sh; do
		case " $integration_exclusive " in *" $(basename "$t") "*) echo "$t" ;; esac
	done
}

# integration_run CLUSTER STAGE SUFFIX: every integration test on a
# private cluster started under CLUSTER for it and stopped after, each
# test's log $logs/STAGE-TEST.log and its label the test's name with
# SUFFIX.  A test in the array STAGE_known is skipped with its reason.
# t-packages.sh is left to the deb stage, which runs it against the
# packages it installs (built against the machine's Slurm).
integration_run() {
	local cluster=$1 stage=$2 suffix=$3 t base
	local -n known=${stage}_known
	if cluster_start "$cluster" "cluster${stage#integration}"; then
		# The tests that need the machine alone last: by then the
		# analyzer's build beside them (a long shared holder) is done,
		# and no test waits behind one of them for it.
		for t in $(integration_order); do
			base=$(basename "$t")
			[ -f "$t" ] && [ "$base" != t-packages.sh ] || continue
			[ -z "${LWM2_SUITE_TESTS:-}" ] || [[ " $LWM2_SUITE_TESTS " == *" $base "* ]] || continue
			if [ -n "${known[$base]:-}" ]; then
				say "     $base$suffix: skipped: ${known[$base]}"
				count_skip
				continue
			fi
			integration_test "$t" "$logs/$stage-${base%.sh}.log" "$base$suffix" "$cluster"
		done
		step "cluster${stage#integration}-stop" bash tests/cluster/cluster.sh stop "$cluster"
	else
		bash tests/cluster/cluster.sh stop "$cluster" >/dev/null 2>&1
	fi
}

# Known not to hold on 22.05 yet, each with why (none now).
# shellcheck disable=SC2034 # read through integration_run's nameref
declare -A integration_known=()

stage_integration() {
	local gccdir=$work/build-gcc cluster=$work/cluster t
	if [ ! -x "$gccdir/digest/lwm2" ] && [ ! -f "$gccdir/preload/.libs/liblwm2.so" ]; then
		count_fail "integration (no gcc build)"
		return 1
	fi
	integration24_start
	scan_build_start
	export LWM2_BUILDDIR=$gccdir LWM2_SRCDIR=$top
	export LWM2_CLUSTER_DIR=$cluster
	integration_run "$cluster" integration ""
	integration24_join
}

# The container images of t-containers.sh (tests/containers/image.sh):
# made once per machine (debootstrap, about 45 s, the two releases side by
# side) under /var/cache/lwm2-suite/images, like the Slurm 24.11 build,
# and used by both integration stages; with podman, their tars for
# `podman import` too.
images_build() {
	local tar=() pid rc=0
	command -v podman >/dev/null && tar=(--tar)
	bash tests/containers/image.sh "${tar[@]}" bullseye &
	pid=$!
	bash tests/containers/image.sh "${tar[@]}" bookworm || rc=1
	wait "$pid" || rc=1
	return "$rc"
}

stage_images() {
	step images images_build
	grep -E 'made in|failed' "$logs/images.log" | sed 's/^/    /'
}

stage_distcheck() {
	if ! LWM2_FUZZ_RUNS=$fuzz_briefly step distcheck make -C "$work/build-gcc" -j2 distcheck; then
		# Which tests failed in the unpacked tree (the step shows only the
		# log's last lines).
		grep -hE '^(FAIL|ERROR): ' "$logs/distcheck.log" | head -n 20 | sed 's/^/    /'
		return 1
	fi
}

# ---------------------------------------------------------------- packages

# The release tarball (make dist) is what the .deb and .rpm builds start
# from, so both also prove it is complete.
dist_tarball() {
	local t
	t=$(ls "$work/build-gcc"/lwm2-*.tar.gz 2>/dev/null | head -n 1)
	if [ -z "$t" ]; then
		make -C "$work/build-gcc" dist >/dev/null || return 1
		t=$(ls "$work/build-gcc"/lwm2-*.tar.gz | head -n 1)
	fi
	echo "$t"
}

deb_build() {
	local t dir=$work/deb
	t=$(dist_tarball) || return 1
	rm -rf "$dir"
	mkdir -p "$dir"
	tar -xzf "$t" -C "$dir" || return 1
	# nocheck: the gcc stage ran the same unit tests.
	(cd "$dir"/lwm2-*/ && DEB_BUILD_OPTIONS="nocheck parallel=2" \
		LWM2_SLURM_SOURCE="$slurm_source" dpkg-buildpackage -b -uc -us) || return 1
	ls "$dir"/*.deb
}

deb_packages() {
	ls "$work"/deb/lwm2_*.deb "$work"/deb/lwm2-mail_*.deb \
		"$work"/deb/slurm-spank-lwm2_*.deb "$work"/deb/slurm-jobcomp-lwm2_*.deb \
		"$work"/deb/lwm2-jobend_*.deb
}

deb_purge() {
	apt-get purge -y -qq lwm2 lwm2-mail slurm-spank-lwm2 slurm-jobcomp-lwm2 lwm2-jobend >/dev/null 2>&1 || true
}

# Build the .deb packages, check them with lintian, install them, and run the
# packaged-plugin test on a private cluster that uses the installed paths
# only; the packages are removed again at the end.
stage_deb() {
	local log pkgs
	if [ -z "$slurm_source" ]; then
		count_fail "deb (no Slurm source for the jobcomp package)"
		return 1
	fi
	step deb-build deb_build || return 1
	step deb-lintian bash -c "lintian --fail-on error $work/deb/*.changes"
	mapfile -t pkgs < <(deb_packages)
	step deb-install apt-get install -y -qq --no-install-recommends "${pkgs[@]}" || return 1
	export LWM2_CLUSTER_DIR=$work/cluster-deb
	unset LWM2_BUILDDIR LWM2_PLUGIN_DIR
	log=$logs/integration-t-packages.log
	LWM2_SRCDIR=$top LWM2_PACKAGES=installed run_tap "$log" "t-packages.sh" bash tests/integration/t-packages.sh
	bash tests/cluster/cluster.sh stop "$work/cluster-deb" >/dev/null 2>&1
	step deb-remove deb_purge
}

rpm_build() {
	local t top_rpm=$work/rpm
	t=$(dist_tarball) || return 1
	rm -rf "$top_rpm"
	# Debian's rpm has no database of the build dependencies: --nodeps.
	rpmbuild -tb --nodeps "$t" --define "_topdir $top_rpm" \
		--define 'debug_package %{nil}' --define "slurm_source $slurm_source" \
		--define "slurm_plugindir /usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/slurm-wlm" || return 1
	# Every package there, with its payload.
	local p
	for p in lwm2 lwm2-spank lwm2-jobcomp lwm2-mail lwm2-jobend; do
		ls "$top_rpm"/RPMS/*/"$p"-0*.rpm >/dev/null || return 1
	done
	rpm -qlp "$top_rpm"/RPMS/*/*.rpm
	rpm -qp --requires "$top_rpm"/RPMS/*/lwm2-jobcomp-*.rpm | grep -x 'slurm-slurmctld = [0-9.]*'
}

stage_rpm() {
	if [ -z "$slurm_source" ]; then
		count_fail "rpm (no Slurm source for the jobcomp package)"
		return 1
	fi
	step rpm-build rpm_build
}

# ---------------------------------------------------------------- Slurm 24.11

slurm24=""
# Outside the scratch directory: the build takes long on 2 cores and a
# fresh clone on the same machine reuses it (keyed on version and flags).
slurm24_dir=${LWM2_SLURM24_DIR:-/var/cache/lwm2-suite/slurm24}

stage_slurm24() {
	local out
	step slurm24-build bash contrib/slurm-build.sh "$slurm24_dir" || return 1
	out=$(tail -n 1 "$logs/slurm24-build.log")
	slurm24=$out
	grep -E 'took|already built' "$logs/slurm24-build.log" | sed 's/^/    /'
	local prefix=${out#SLURM_PREFIX=}
	prefix=${prefix%% *}
	local src=${out#*SLURM_SOURCE=}
	src=${src%% *}
	local build=${out##*SLURM_BUILD=}
	# The jobcomp glue and the command against 24.11; the unit tests are
	# the same as the gcc stage's and are not run again.
	local dir=$work/build-slurm24
	rm -rf "$dir"
	mkdir -p "$dir"
	step configure-slurm24 bash -c "cd '$dir' && '$top/configure' CC=gcc ${configure_common[*]} --with-slurm='$prefix' --with-slurm-source='$src:$build'" || return 1
	step build-slurm24 make -C "$dir" -j2
}

# The integration tests on a cluster of the 24.11 daemons: beside the
# integration stage's when both run (integration24_start), else on their
# own.
# Known not to hold on 24.11 yet, each with why (shown in the skip summary).
# shellcheck disable=SC2034 # read through integration_run's nameref
declare -A integration24_known=()

stage_integration24() {
	local dir=$work/build-slurm24 cluster=$work/cluster24 t prefix
	if [ -z "$slurm24" ] || [ ! -x "$dir/digest/lwm2" ]; then
		count_fail "integration24 (no Slurm 24.11 build)"
		return 1
	fi
	prefix=${slurm24#SLURM_PREFIX=}
	prefix=${prefix%% *}
	local save_path=$PATH
	export LWM2_BUILDDIR=$dir LWM2_SRCDIR=$top LWM2_CLUSTER_DIR=$cluster
	export LWM2_SLURM_PREFIX=$prefix PATH=$prefix/bin:$prefix/sbin:$PATH
	integration_run "$cluster" integration24 " (24.11)"
	PATH=$save_path
	unset LWM2_SLURM_PREFIX
}

# integration24_start: when the 24.11 stage is wanted and built, its tests
# in the background, counted from zero; its output and its counts in files
# that integration24_join adds to the suite's.
integration24_pid=
integration24_done=
integration24_start() {
	wanted integration24 && [ -n "$slurm24" ] || return 0
	(
		passed=0 failed=0 skipped=0 failures=() notes=()
		stage_integration24
		printf '%s %s %s\n' "$passed" "$failed" "$skipped" >"$work/integration24.counts"
		printf '%s\n' "${failures[@]}" >"$work/integration24.failures"
		printf '%s\n' "${notes[@]}" >"$work/integration24.notes"
	) >"$logs/integration24.out" 2>&1 &
	integration24_pid=$!
	say "     integration24: Slurm 24.11's tests started beside these"
}

integration24_join() {
	local p f s line
	[ -n "$integration24_pid" ] || return 0
	wait "$integration24_pid"
	say "== integration24 (beside integration)"
	cat "$logs/integration24.out"
	if read -r p f s <"$work/integration24.counts"; then
		passed=$((passed + p))
		failed=$((failed + f))
		skipped=$((skipped + s))
		while IFS= read -r line; do
			[ -n "$line" ] && failures+=("$line")
		done <"$work/integration24.failures"
		while IFS= read -r line; do
			[ -n "$line" ] && notes+=("$line")
		done <"$work/integration24.notes"
	else
		count_fail "integration24 (its background run left no counts)"
	fi
	integration24_done=1
}

stop_clusters() {
	local c
	for c in cluster cluster-deb cluster24; do
		bash "$top/tests/cluster/cluster.sh" stop "$work/$c" >/dev/null 2>&1
	done
}
trap stop_clusters EXIT

stage_times=()
# The images before the unit tests (preload's glibc checks run programs in
# the Debian 11 image), slurm24 before integration (the two Slurm
# versions' integration tests run side by side).
for stage in deps slurm_source autogen images gcc slurm24 integration integration24 clang asan lint distcheck deb rpm; do
	if ! wanted "$stage"; then
		continue
	fi
	# run beside the integration stage, and counted there
	[ "$stage" = integration24 ] && [ -n "$integration24_done" ] && continue
	say "== $stage"
	stage_t0=$(date +%s)
	"stage_$stage"
	stage_times+=("$(printf '%6d s  %s' "$(($(date +%s) - stage_t0))" "$stage")")
	if [ "$stage" = deps ] || [ "$stage" = autogen ]; then
		# Nothing else can run without these.
		[ $failed -eq 0 ] || break
	fi
done

say "suite took $(($(date +%s) - suite_start)) s; logs in $logs"
say "time by stage:"
printf '    %s\n' "${stage_times[@]}"
if [ ${#notes[@]} -gt 0 ]; then
	say "notes:"
	printf '    %s\n' "${notes[@]}"
fi
skip_summary
# The failures last, and the lines that say why a cluster did not start
# after them: CI shows the end of this output, not the logs.
if [ ${#failures[@]} -gt 0 ]; then
	say "failures:"
	printf '    %s\n' "${failures[@]}"
fi
# what the failed cases said (their first lines), at most 60 lines
if [ -s "$work/failed-diag" ]; then
	say "what the failed cases said:"
	head -n 60 "$work/failed-diag"
fi
for f in "$logs"/*-start-failed/why; do
	[ -s "$f" ] || continue
	say "why $(basename "$(dirname "$f")"):"
	sed 's/^/    /' "$f"
done
echo "$passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
