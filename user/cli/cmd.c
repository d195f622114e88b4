// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cmd.c - from argv to a command of the table (see cmd.h). */
#include <string.h>

#include "cli/cmd.h"

void lw_cmd_usage(FILE *f, const struct lw_cmd *cmds, size_t n)
{
	fprintf(f,
		"Usage: latwhy COMMAND [OPTIONS]\n"
		"       latwhy [OPTIONS]          the same as: latwhy %s [OPTIONS]\n"
		"\n"
		"Explain where slow requests of a live process spend their time: CPU clock,\n"
		"interrupts, transparent huge pages, or other tasks on its CPU.\n"
		"\n"
		"Commands:\n",
		cmds[0].name);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f, "\n'latwhy COMMAND --help' lists a command's options.\n");
}

int lw_cmd_parsed(const char *cmd, int ret, const char *err, void (*usage)(FILE *f))
{
	if (!ret)
		return -1;
	if (ret == 1) {
		usage(stdout);
		return LW_EXIT_OK;
	}
	fprintf(stderr, "latwhy: %s (see latwhy %s --help)\n", err, cmd);
	return LW_EXIT_USAGE;
}

enum lw_exit lw_cmd_dispatch(const struct lw_cmd *cmds, size_t n, int argc, char **argv)
{
	if (argc < 2 || argv[1][0] == '-') {
		if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
			lw_cmd_usage(stdout, cmds, n);
			return LW_EXIT_OK;
		}
		return cmds[0].run(argc, argv);
	}
	for (size_t i = 0; i < n; i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].run(argc - 1, argv + 1);
	fprintf(stderr, "latwhy: unknown command '%s' (see latwhy --help)\n", argv[1]);
	return LW_EXIT_USAGE;
}
