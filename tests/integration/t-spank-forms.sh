#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Every form of the lwm2 options with every Slurm command: srun, sbatch on
# the command line, sbatch in an #SBATCH line and salloc, each with
# --lwm2 alone, =on, =off, =print or none, and inside each allocation one
# srun of every form.  A step takes its own form, else the allocation's,
# else the site's default (off here, so that an inherited "on" shows).
# Each step must run, be measured or not as the forms say, print its
# digest where print says so and print nothing of lwm2 otherwise, and the
# job's digest must hold every measured step.  Then --lwm2-slice and
# --lwm2-events passed on, --export=ALL, NONE and a list, values in the
# environment that lwm2 cannot use (never a failed step, one line each),
# and a site that measures every job (optout=no).
set -uo pipefail

# shellcheck source=tests/integration/forms-lib.sh
. "$(dirname "$0")/forms-lib.sh"

forms_setup

# forms.sh TAG: the batch shell's own line, then one srun of every form.
# In the #SBATCH variant the allocation's form is a directive.
write_forms_script() {
	local file=$1 directive=$2 f
	{
		echo '#!/bin/bash'
		echo '#SBATCH -N1 -n1 -o forms-%j.out'
		[ -n "$directive" ] && echo "#SBATCH $directive"
		echo "probe='$FORMS_PROBE'"
		# shellcheck disable=SC2016 # the script's own expansions
		echo 'echo "tag=$1/batch step=batch mode=${LWM2_MODE:-off}"'
		for f in "${FORMS[@]}"; do
			# shellcheck disable=SC2016
			echo "srun $(form_flag "$f") bash -c \"\$probe\" \"\$1/$f\" 2>\"err-\$SLURM_JOB_ID-$f\""
		done
	} >"$file"
	chown "$TEST_USER" "$file"
}

declare -A job_of_case=()
write_forms_script "$U/forms.sh" ""
for o in "${FORMS[@]}"; do
	# shellcheck disable=SC2046 # the form's flag, or nothing
	job_of_case[sbatch/$o]=$(sbatch_as $(form_flag "$o") forms.sh "sbatch/$o")
	write_forms_script "$U/forms-$o.sh" "$(form_flag "$o")"
	job_of_case[sbatch#/$o]=$(sbatch_as "forms-$o.sh" "sbatch#/$o")
done
# salloc runs the same script as its command, outside any step; srun
# alone runs the probe as its step.  All side by side.
pids=()
for o in "${FORMS[@]}"; do
	# shellcheck disable=SC2046
	as_user timeout 60 salloc -N1 -n1 $(form_flag "$o") bash forms.sh "salloc/$o" \
		>"$U/salloc-$o.out" 2>&1 &
	pids+=($!)
	# shellcheck disable=SC2046
	as_user timeout 60 srun -N1 -n1 $(form_flag "$o") bash -c "$FORMS_PROBE" "srun/$o" \
		>"$U/srun-$o.out" 2>"$U/srun-$o.err" &
	pids+=($!)
done
wait "${pids[@]}"

# --- srun alone: its own form, else the site's default
for o in "${FORMS[@]}"; do
	job=$(probe_fields "$(cat "$U/srun-$o.out")" "srun/$o" job)
	job_of_case[srun/$o]=$job
	check_step "srun $(form_flag "$o" none) ran, $(expect_word "$o" none)" \
		"$(cat "$U/srun-$o.out")" "srun/$o" "$job" 0 "$(expect_mode "$o" none)" "$U/srun-$o.err"
done

# --- sbatch (command line and #SBATCH) and salloc: every inner form
for c in sbatch 'sbatch#' salloc; do
	for o in "${FORMS[@]}"; do
		if [ "$c" = salloc ]; then
			out=$(cat "$U/salloc-$o.out")
			job=$(sed -n 's/.*Granted job allocation \([0-9]*\).*/\1/p' <<<"$out" | head -n 1)
			job_of_case[$c/$o]=$job
		else
			job=${job_of_case[$c/$o]}
			state=$(wait_job "$job" 60)
			out=$(cat "$U/forms-$job.out" 2>/dev/null)
			if [ "$state" != COMPLETED ]; then
				diag "$c $(form_flag "$o" none): job $job $state" "$out"
			fi
		fi
		k=0
		for i in "${FORMS[@]}"; do
			check_step "$c $(form_flag "$o" none), srun $(form_flag "$i" none) inside ran, $(expect_word "$o" "$i")" \
				"$out" "$c/$o/$i" "$job" "$k" "$(expect_mode "$o" "$i")" "$U/err-$job-$i"
			k=$((k + 1))
		done
		if [ "$c" != salloc ]; then
			is "$(probe_fields "$out" "$c/$o/batch" mode)" \
				"$(expect_mode "$o" none | sed 's/print/on/')" \
				"$c $(form_flag "$o" none): the batch shell measured as the form says"
		fi
	done
done

# --- the digests: every measured step of each job, no other
# expected_steps COMMAND FORM: the measured steps of that case's job.
expected_steps() {
	local k=0 i steps=()
	if [ "$1" = srun ]; then
		[ "$(expect_mode "$2" none)" = off ] || steps+=(0)
	else
		for i in "${FORMS[@]}"; do
			[ "$(expect_mode "$2" "$i")" = off ] || steps+=("$k")
			k=$((k + 1))
		done
		[ "$1" = salloc ] || [ "$(expect_mode "$2" none)" = off ] || steps+=(4294967291)
	fi
	echo "${steps[*]}"
}
while IFS= read -r key; do
	c=${key%%/*} o=${key#*/}
	job=${job_of_case[$key]}
	want=$(expected_steps "$c" "$o")
	is "$(digest_steps "$job" "$want")" "$want" \
		"$c $(form_flag "$o" none): the job's digest holds its measured steps (${want:-none})"
done < <(printf '%s\n' "${!job_of_case[@]}" | sort)

# --- --lwm2-slice and --lwm2-events with each command, passed on; an
# inner step's own wins
slice_script() {
	{
		echo '#!/bin/bash'
		echo "#SBATCH -N1 -n1 -o slice-%j.out${1:+ $1}"
		echo "probe='$FORMS_PROBE'"
		# shellcheck disable=SC2016 # the script's own expansions
		echo 'srun bash -c "$probe" inherited'
		# shellcheck disable=SC2016
		echo 'srun --lwm2-slice=9 bash -c "$probe" own'
	} >"$U/$2"
	chown "$TEST_USER" "$U/$2"
}
slice_script "" slice.sh
slice_script "--lwm2 --lwm2-slice=7 --lwm2-events=PAPI_TOT_INS" slice-directive.sh
declare -A slice_job=(
	[sbatch]=$(sbatch_as --lwm2 --lwm2-slice=7 --lwm2-events=PAPI_TOT_INS slice.sh)
	[sbatch#]=$(sbatch_as slice-directive.sh)
)
for c in sbatch 'sbatch#'; do
	job=${slice_job[$c]}
	is "$(wait_job "$job" 60)" COMPLETED "$c --lwm2 --lwm2-slice=7 --lwm2-events=PAPI_TOT_INS: job $job COMPLETED"
	out=$(cat "$U/slice-$job.out" 2>/dev/null)
	is "$(probe_fields "$out" inherited mode slice events)" \
		"on 7 PAPI_TOT_INS" "$c: srun inside: the allocation's slice and events"
	is "$(probe_fields "$out" own slice events)" \
		"9 PAPI_TOT_INS" "$c: srun --lwm2-slice=9 inside: its own slice, the allocation's events"
done
out=$(as_user timeout 60 salloc -N1 -n1 --lwm2=print --lwm2-slice=11 --lwm2-events=PAPI_TOT_CYC \
	srun bash -c "$FORMS_PROBE" salloc-slice 2>&1)
is "$(probe_fields "$out" salloc-slice mode slice events)" \
	"on 11 PAPI_TOT_CYC" "salloc --lwm2=print --lwm2-slice=11 --lwm2-events=PAPI_TOT_CYC: the step inside has them"
check "salloc --lwm2=print: the step inside printed its digest" grep -q "Guidance:" <<<"$out"
out=$(as_user timeout 60 srun -N1 -n1 --lwm2 --lwm2-slice=13 --lwm2-events=PAPI_TOT_CYC \
	bash -c "$FORMS_PROBE" srun-slice 2>&1)
is "$(probe_fields "$out" srun-slice mode slice events)" \
	"on 13 PAPI_TOT_CYC" "srun --lwm2 --lwm2-slice=13 --lwm2-events=PAPI_TOT_CYC: the step has them"

# --- --export: ALL, NONE and a list, on sbatch and on the srun inside
# (with no PATH exported, the script names srun and a step its program
# by their paths: the cluster's Slurm may not be the one in /usr/bin)
srun=$(command -v srun)
cat >"$U/export.sh" <<EOF
#!/bin/bash
#SBATCH -N1 -n1 -o export-%j.out
probe='$FORMS_PROBE'
$srun /bin/bash -c "\$probe" "\$1/srun"
$srun --export=NONE /bin/bash -c "\$probe" "\$1/srun-export-none"
$srun --export=MYVAR /bin/bash -c "\$probe" "\$1/srun-export-list"
EOF
chown "$TEST_USER" "$U/export.sh"
declare -A export_job=()
for e in ALL NONE MYVAR; do
	export_job[$e]=$(MYVAR=1 sbatch_as --lwm2 --export="$e" export.sh "export-$e")
done
for e in ALL NONE MYVAR; do
	job=${export_job[$e]}
	is "$(wait_job "$job" 60)" COMPLETED "sbatch --lwm2 --export=$e: job $job COMPLETED"
	out=$(cat "$U/export-$job.out" 2>/dev/null)
	for s in srun srun-export-none srun-export-list; do
		is "$(probe_fields "$out" "export-$e/$s" mode)" on \
			"sbatch --lwm2 --export=$e: $(sed 's/-export-none/ --export=NONE/; s/-export-list/ --export=MYVAR/' <<<"$s") inside ran, measured"
	done
done

# --- values in the environment that lwm2 cannot use: never a failed
# step; one line says what lwm2 uses instead
var=SLURM_SPANK__SLURM_SPANK_OPTION_lwm2_lwm2
out=$(as_user env "$var=bogus" "${var}_slice=0" "${var}_events=a;b" timeout 60 \
	srun -N1 -n1 bash -c "$FORMS_PROBE" env-bad 2>&1)
rc=$?
is "$rc" 0 "srun under $var=bogus (and slice=0, events='a;b'): exit 0"
check "srun under bad inherited values: the step ran" test -n "$(probe_line "$out" env-bad)"
is "$(grep -c "lwm2: option: ignoring --lwm2\(-slice\|-events\)\?=.* from the allocation ($var\(_slice\|_events\)\?): .*; using the site's" <<<"$out")" 3 \
	"srun under bad inherited values: one line for each, naming the variable and what is used"
is "$(probe_fields "$out" env-bad mode)" off \
	"srun under $var=bogus: the site's default (off) used"
out=$(as_user env "$var=bogus" sbatch --parsable -N1 -n1 -o /dev/null --wrap=true 2>&1)
rc=$?
check "sbatch under $var=bogus: submitted (exit $rc)" test "$rc" -eq 0
job=$(grep -E '^[0-9]+' <<<"$out" | head -n 1)
job=${job%%;*}
[ -n "$job" ] && is "$(wait_job "$job" 60)" COMPLETED "sbatch under $var=bogus: job $job COMPLETED" ||
	not_ok "sbatch under $var=bogus: job COMPLETED"
out=$(as_user srun -N1 -n1 --lwm2=bogus true 2>&1)
check "srun --lwm2=bogus typed on the command line is still refused" \
	grep -q "couldn't use --lwm2=bogus: 'bogus' is not one of on, off, light, print" <<<"$out"
out=$(as_user srun -N1 -n1 '--lwm2=(null)' true 2>&1)
check "srun --lwm2='(null)' typed on the command line is refused too" \
	grep -q "couldn't use --lwm2=(null)" <<<"$out"

# --- a site that measures every job: a typed --lwm2=off is refused, an
# inherited one runs, measured, with one line
cluster_reconfig \
	"LWM2_PLUGSTACK=optional $LIBDIR/spank_lwm2.so lib=$LIBDIR/liblwm2.so basedir=$BASEDIR spool=$SPOOL optout=no" ||
	bail_out "cluster reconfig with optout=no failed"
out=$(as_user srun -N1 -n1 --lwm2=off true 2>&1)
check "optout=no: srun --lwm2=off typed is refused" grep -q "this site measures every job" <<<"$out"
out=$(as_user env "$var=off" timeout 60 srun -N1 -n1 bash -c "$FORMS_PROBE" env-off 2>&1)
rc=$?
is "$rc:$(probe_fields "$out" env-off mode)" 0:on \
	"optout=no: srun under an inherited --lwm2=off runs, measured"
is "$(grep -c "ignoring --lwm2=off from the allocation.*this site measures every job" <<<"$out")" 1 \
	"optout=no: one line says the inherited --lwm2=off is not followed"

done_testing
