/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cmd.h - latwhy's commands: the table main dispatches on, and the exit
 * codes every command returns.
 */
#ifndef LW_CMD_H
#define LW_CMD_H

#include <stddef.h>
#include <stdio.h>

/* What latwhy exits with: the kind of outcome, never an errno value. */
enum lw_exit {
	LW_EXIT_OK = 0,
	LW_EXIT_FAIL = 1,  /* a runtime error, already reported */
	LW_EXIT_USAGE = 2, /* a bad command line, already reported */
};

struct lw_cmd {
	const char *name;    /* selects it: latwhy NAME ... */
	const char *summary; /* its one line in latwhy --help */
	/* argv[0] is the command's name, or the program's when it runs as
	 * the default command */
	enum lw_exit (*run)(int argc, char **argv);
};

/*
 * Run the command argv[1] names with argv from there on. With no argument,
 * or an option first, run the first command with all of argv; -h or --help
 * first prints the command list. An unknown command is a usage error.
 */
enum lw_exit lw_cmd_dispatch(const struct lw_cmd *cmds, size_t n, int argc, char **argv);

/* latwhy --help: the commands, one line each. */
void lw_cmd_usage(FILE *f, const struct lw_cmd *cmds, size_t n);

/*
 * What a command's parser returned (0, 1 for help, -EINVAL with err): -1
 * for the command to go on; else its exit, after the help on stdout or
 * the usage error on stderr, one line: "latwhy: ERR (see latwhy CMD --help)".
 */
int lw_cmd_parsed(const char *cmd, int ret, const char *err, void (*usage)(FILE *f));

/* The commands, one file each: cmd_<name>.c. */
enum lw_exit lw_cmd_trace(int argc, char **argv);
enum lw_exit lw_cmd_check(int argc, char **argv);
enum lw_exit lw_cmd_record(int argc, char **argv);
enum lw_exit lw_cmd_report(int argc, char **argv);
enum lw_exit lw_cmd_diff(int argc, char **argv);
enum lw_exit lw_cmd_serve(int argc, char **argv);

#endif /* LW_CMD_H */
