/* cmd.h - the subcommands main() dispatches to. Each parses its own argv (argv[0] is the
 * subcommand's name) and returns the process exit status. */
#ifndef LXTRACE_USER_CMD_H
#define LXTRACE_USER_CMD_H

int cmd_record(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_repair(int argc, char **argv);
int cmd_cut(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_pprof(int argc, char **argv);

#endif
