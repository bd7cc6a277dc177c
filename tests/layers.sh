#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The layers of the tree, held against its includes: a file of digest/
# includes only its own folder and the folders above it in LAYERS, and
# each part outside digest/ only the layers it links (doc/HACKING.md,
# "Where code goes").  Prints every include that breaks that and exits 1;
# exits 0 when there is none.  Run from the top of the tree.
set -u

LAYERS=(format util render merge site db cmd)
# What the parts outside digest/ may include of it: preload/ links only the
# record and render layers (liblwm2.so must stay free of json-c and munge;
# util's headers it uses define constants only); spank/ builds node
# records; jobcomp/ everything below the command.
declare -A PART_MAY=(
	[preload]="format render util"
	[spank]="format util render merge"
	[jobcomp]="format util render merge site db"
)

cd "$(dirname "$0")/.." || exit 2

# header name -> its layer
declare -A layer_of
for l in "${LAYERS[@]}"; do
	for f in digest/"$l"/*.h digest/"$l"/*.c; do
		[ -e "$f" ] && layer_of[$(basename "$f")]=$l
	done
done

rank_of() {
	local i
	for i in "${!LAYERS[@]}"; do
		[ "${LAYERS[$i]}" = "$1" ] && echo "$i" && return
	done
	echo -1
}

broken=0
check_file() { # FILE ALLOWED-LAYERS...
	local file=$1 inc l
	shift
	while read -r inc; do
		l=${layer_of[$inc]:-}
		[ -n "$l" ] || continue
		case " $* " in *" $l "*) continue ;; esac
		echo "$file includes $inc of digest/$l/, which its layer may not use"
		broken=$((broken + 1))
	done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file")
}

for l in "${LAYERS[@]}"; do
	r=$(rank_of "$l")
	allowed=("${LAYERS[@]:0:r+1}")
	for f in digest/"$l"/*.[ch]; do
		[ -e "$f" ] && check_file "$f" "${allowed[@]}"
	done
done
for part in "${!PART_MAY[@]}"; do
	# shellcheck disable=SC2086 # the list is words
	while read -r f; do
		check_file "$f" ${PART_MAY[$part]}
	done < <(git ls-files "$part/*.c" "$part/*.h" | grep -v "^$part/test/")
done

if [ "$broken" -gt 0 ]; then
	echo "layers: $broken include(s) across the layers' order"
	exit 1
fi
echo "layers: every include of digest/ follows the layers' order"
