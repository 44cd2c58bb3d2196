# cmd/: the composition root (main.c: the subcommand table, the node and
# the admin server put together) and one front end per subcommand — its
# options, usage and exit codes — on top of every other folder. Built into
# the binary only: nothing else includes these files, and the tests link
# the library without them.
searchsync_SOURCES += cmd/main.c cmd/commands.h cmd/cmd_prologue.c \
	cmd/cmd_config.c cmd/cmd_migrate.c cmd/cmd_tail.c cmd/cmd_kafka_tail.c cmd/cmd_topics.c \
	cmd/cmd_dead_letters.c cmd/cmd_run.c cmd/cmd_mapping.c cmd/cmd_reindex.c \
	cmd/cmd_resync.c cmd/cmd_delayed.c cmd/cmd_check.c cmd/cmd_replay.c cmd/cmd_status.c \
	cmd/cmd_rebalance.c cmd/cmd_epoch.c cmd/cmd_source.c
EXTRA_DIST += cmd/README.md
