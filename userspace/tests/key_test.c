// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit test of userspace/key.c, the cluster key file reader, TAP
 * output: the lengths and modes it accepts, and the message of each
 * refusal.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../key.h"
#include "tap.h"

static char dir[32];

/* A file of @len bytes 1, 2, ... with @mode; its path. */
static const char *make_key(const char *name, size_t len, mode_t mode)
{
	static char path[256];
	unsigned char b[128];
	size_t i;
	int fd;

	for (i = 0; i < len && i < sizeof(b); i++)
		b[i] = i + 1;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, b, len) != (ssize_t)len || fchmod(fd, mode)) {
		perror(path);
		exit(1);
	}
	close(fd);
	return path;
}

/* @path refused with a message containing @msg and errno @e. */
static void check_refused(const char *desc, const char *path, int e, const char *msg)
{
	char err[RDLOCK_KEY_ERR_MAX] = "";
	struct rdlock_cluster_key k;
	int ret = rdlock_key_read(path, &k, err, sizeof(err));

	result(ret == -e && strstr(err, msg) && !k.len &&
	       !memchr(k.key, 1, sizeof(k.key)), "refused: %s", desc);
	if (ret != -e || !strstr(err, msg))
		printf("#   got %d '%s'\n", ret, err);
}

static void check_accepted(const char *desc, size_t len, mode_t mode)
{
	char err[RDLOCK_KEY_ERR_MAX] = "";
	struct rdlock_cluster_key k;
	int ret, ok = 1;
	size_t i;

	ret = rdlock_key_read(make_key("k", len, mode), &k, err, sizeof(err));
	if (ret || k.len != len || k.version != RDLOCK_UAPI_VERSION)
		ok = 0;
	for (i = 0; ok && i < sizeof(k.key); i++)
		if (k.key[i] != (i < len ? i + 1 : 0))
			ok = 0;
	if (k.reserved[0] || k.reserved[1])
		ok = 0;
	result(ok, "accepted: %s", desc);
	if (!ok)
		printf("#   got %d '%s' len %u\n", ret, err, k.len);
}

int main(void)
{
	char sub[300];

	strcpy(dir, "/tmp/rdlock-key-test.XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	check_accepted("16 bytes, the shortest", RDLOCK_KEY_MIN, 0600);
	check_accepted("32 bytes, mode 0400", 32, 0400);
	check_accepted("64 bytes, the longest", RDLOCK_KEY_MAX, 0600);
	check_refused("15 bytes", make_key("k", RDLOCK_KEY_MIN - 1, 0600), EINVAL,
		      "shorter than 16 bytes");
	check_refused("65 bytes", make_key("k", RDLOCK_KEY_MAX + 1, 0600), EINVAL,
		      "longer than 64 bytes");
	check_refused("empty", make_key("k", 0, 0600), EINVAL,
		      "shorter than 16 bytes");
	check_refused("group-readable", make_key("k", 32, 0640), EPERM,
		      "group or others may access it (mode 0640): chmod 600");
	check_refused("world-readable", make_key("k", 32, 0604), EPERM,
		      "(mode 0604)");
	check_refused("missing", "/nonexistent/rdlock.key", ENOENT,
		      "No such file or directory");
	snprintf(sub, sizeof(sub), "%s/d", dir);
	if (mkdir(sub, 0700)) {
		perror(sub);
		return 1;
	}
	check_refused("a directory", sub, EINVAL, "not a regular file");
	rmdir(sub);
	snprintf(sub, sizeof(sub), "%s/k", dir);
	unlink(sub);
	rmdir(dir);
	return tap_finish();
}
