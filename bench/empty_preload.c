/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A library that does nothing, preloaded like liblwm2.so by run.sh: the
 * floor of the process rows (what preloading anything costs: the loader
 * maps one more object, and every fork child and new image faults its
 * pages in), so the rows tell that apart from lwm2's own work.
 */
int lwm2_bench_empty_preload;
