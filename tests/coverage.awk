# SPDX-License-Identifier: GPL-2.0-or-later
# Lines found and hit per directory of the tree, in the order of the data
# flow (preload, spank, jobcomp, digest), from an lcov tracefile (make
# coverage): awk -v top=SRCDIR/ -f coverage.awk lcov.info
/^SF:/ {
	f = substr($0, 4)
	if (index(f, top) == 1)
		f = substr(f, length(top) + 1)
	dir = f
	if (!sub(/\/[^\/]*$/, "", dir))
		dir = "."
}
/^LF:/ { found[dir] += substr($0, 4); all_f += substr($0, 4) }
/^LH:/ { hit[dir] += substr($0, 4); all_h += substr($0, 4) }
function row(d) {
	printf "%-14s %8d %8d %6.1f%%\n", d, found[d], hit[d], found[d] ? 100 * hit[d] / found[d] : 0
}
END {
	printf "%-14s %8s %8s %7s\n", "directory", "lines", "hit", "cover"
	n = split("preload spank jobcomp digest", order, " ")
	for (i = 1; i <= n; i++) {
		# the part's directories, sorted by name
		m = 0
		for (d in found)
			if (d == order[i] || index(d, order[i] "/") == 1)
				list[++m] = d
		for (a = 2; a <= m; a++)
			for (b = a; b > 1 && list[b - 1] > list[b]; b--) {
				t = list[b]; list[b] = list[b - 1]; list[b - 1] = t
			}
		for (a = 1; a <= m; a++) {
			row(list[a])
			seen[list[a]] = 1
		}
	}
	for (d in found)
		if (!(d in seen))
			row(d)
	printf "%-14s %8d %8d %6.1f%%\n", "total", all_f, all_h, all_f ? 100 * all_h / all_f : 0
}
