/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Placeholder until the core lands. */
