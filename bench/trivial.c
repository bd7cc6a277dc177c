/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The smallest process: start and exit cost, resident memory. */
int main(void)
{
	return 0;
}
