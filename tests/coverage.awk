# SPDX-License-Identifier: GPL-2.0-or-later
# Lines found and hit per top-level part of the tree, from an lcov
# tracefile (make coverage): awk -v top=SRCDIR/ -f coverage.awk lcov.info
/^SF:/ {
	f = substr($0, 4)
	if (index(f, top) == 1)
		f = substr(f, length(top) + 1)
	part = f
	sub(/\/.*/, "", part)
}
/^LF:/ { found[part] += substr($0, 4); all_f += substr($0, 4) }
/^LH:/ { hit[part] += substr($0, 4); all_h += substr($0, 4) }
END {
	printf "%-10s %8s %8s %7s\n", "part", "lines", "hit", "cover"
	n = split("preload spank jobcomp digest", order, " ")
	for (i = 1; i <= n; i++) {
		p = order[i]
		if (p in found)
			printf "%-10s %8d %8d %6.1f%%\n", p, found[p], hit[p], found[p] ? 100 * hit[p] / found[p] : 0
		seen[p] = 1
	}
	for (p in found)
		if (!(p in seen))
			printf "%-10s %8d %8d %6.1f%%\n", p, found[p], hit[p], found[p] ? 100 * hit[p] / found[p] : 0
	printf "%-10s %8d %8d %6.1f%%\n", "total", all_f, all_h, all_f ? 100 * all_h / all_f : 0
}
