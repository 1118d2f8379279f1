// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock-stat-bench - the OCFS2 benchmark's stat phases (ocfs2.sh): one
 * process reads a directory once, then lstat()s every entry of it, pass
 * after pass, as mdtest's stat phase works from one process. "ls -l" per
 * pass spent some 25 ms of fork and exec under TCG on a pass of 100 cached
 * lstats that took about 1.2 ms (11 to 14 us each on OCFS2, 5 to 6 on
 * tmpfs), so the file system hardly showed in its time.
 *
 *   rdlock-stat-bench [--passes N] [--expect N] DIR
 *
 * Every lstat() must succeed; with --expect, the first pass must find
 * exactly N regular files. Prints "DIR: E entries, F files, L lstats".
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"

struct entries {
	char **names;
	size_t nr;
	size_t size;
};

static int entries_add(struct entries *e, const char *dir, const char *name)
{
	char *path;

	if (e->nr == e->size) {
		size_t size = e->size ? 2 * e->size : 256;
		char **names = realloc(e->names, size * sizeof(*names));

		if (!names)
			return -ENOMEM;
		e->names = names;
		e->size = size;
	}
	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return -ENOMEM;
	e->names[e->nr++] = path;
	return 0;
}

/* Every entry of @dir but "." and "..", by path. */
static int entries_read(struct entries *e, const char *dir)
{
	struct dirent *d;
	DIR *dp;
	int ret = 0;

	dp = opendir(dir);
	if (!dp)
		return -errno;
	for (;;) {
		errno = 0;
		d = readdir(dp);
		if (!d) {
			ret = -errno;
			break;
		}
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		ret = entries_add(e, dir, d->d_name);
		if (ret)
			break;
	}
	closedir(dp);
	return ret;
}

static void usage(const char *prog)
{
	fprintf(stderr, "Usage: %s [--passes N] [--expect N] DIR\n", prog);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "passes", required_argument, NULL, 'p' },
		{ "expect", required_argument, NULL, 'e' },
		{ NULL, 0, NULL, 0 },
	};
	struct entries e = { 0 };
	__u32 passes = 1, expect = 0, pass;
	unsigned long files = 0;
	bool check = false;
	struct stat st;
	size_t i;
	int c, ret;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_u32_arg(optarg, &passes))
				usage(argv[0]);
			break;
		case 'e':
			if (parse_u32_arg(optarg, &expect))
				usage(argv[0]);
			check = true;
			break;
		default:
			usage(argv[0]);
		}
	}
	if (optind != argc - 1 || !passes)
		usage(argv[0]);

	ret = entries_read(&e, argv[optind]);
	if (ret) {
		fprintf(stderr, "rdlock-stat-bench: %s: %s\n", argv[optind],
			strerror(-ret));
		return 1;
	}
	for (pass = 0; pass < passes; pass++) {
		for (i = 0; i < e.nr; i++) {
			if (lstat(e.names[i], &st)) {
				fprintf(stderr, "rdlock-stat-bench: lstat %s: %s\n",
					e.names[i], strerror(errno));
				return 1;
			}
			if (!pass && S_ISREG(st.st_mode))
				files++;
		}
	}
	printf("%s: %zu entries, %lu files, %zu lstats\n", argv[optind], e.nr,
	       files, passes * e.nr);
	if (check && files != expect) {
		fprintf(stderr, "rdlock-stat-bench: %s: %lu files, expected %u\n",
			argv[optind], files, expect);
		return 1;
	}
	return 0;
}
