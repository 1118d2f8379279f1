// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit test of userspace/key.c, the cluster key file reader and
 * writer, TAP output: the lengths and modes it accepts, the message of
 * each refusal, and what "rdlockctl keygen" writes.
 */
#include <dirent.h>
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

/* Entries of @d other than "." and "..". */
static int entries(const char *d)
{
	struct dirent *e;
	DIR *dp = opendir(d);
	int n = 0;

	if (!dp)
		return -1;
	while ((e = readdir(dp)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(dp);
	return n;
}

/* rdlock_key_write(): a readable key, kept unless forced, no leftovers. */
static void check_write(void)
{
	struct rdlock_cluster_key a, b;
	char err[RDLOCK_KEY_ERR_MAX] = "";
	char path[400], sub[300];
	struct stat st;
	int ret;

	snprintf(sub, sizeof(sub), "%s/w", dir);
	snprintf(path, sizeof(path), "%s/cluster.key", sub);
	if (mkdir(sub, 0755)) {
		perror(sub);
		exit(1);
	}
	umask(022);
	ret = rdlock_key_write(path, 0, err, sizeof(err));
	result(!ret && !stat(path, &st) && (st.st_mode & 07777) == 0600 &&
	       st.st_size == RDLOCK_KEY_GEN_LEN, "keygen: %s bytes, mode 0600",
	       "32");
	ret = rdlock_key_read(path, &a, err, sizeof(err));
	result(!ret && a.len == RDLOCK_KEY_GEN_LEN, "keygen: %s",
	       "the reader takes it");
	ret = rdlock_key_write(path, 0, err, sizeof(err));
	rdlock_key_read(path, &b, err + 100, sizeof(err) - 100);
	result(ret == -EEXIST && strstr(err, "--force replaces it") &&
	       !memcmp(&a, &b, sizeof(a)), "keygen: %s",
	       "an existing key is kept without --force");
	ret = rdlock_key_write(path, 1, err, sizeof(err));
	rdlock_key_read(path, &b, err, sizeof(err));
	result(!ret && b.len == RDLOCK_KEY_GEN_LEN &&
	       memcmp(a.key, b.key, sizeof(a.key)), "keygen: %s",
	       "--force writes a new one");
	result(entries(sub) == 1, "keygen: %s", "no temporary file left");
	snprintf(path, sizeof(path), "%s/none/cluster.key", sub);
	ret = rdlock_key_write(path, 0, err, sizeof(err));
	result(ret == -ENOENT && entries(sub) == 1, "keygen: %s",
	       "a missing directory: ENOENT, nothing written");
	snprintf(path, sizeof(path), "%s/cluster.key", sub);
	unlink(path);
	rmdir(sub);
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
	check_write();
	snprintf(sub, sizeof(sub), "%s/k", dir);
	unlink(sub);
	rmdir(dir);
	return tap_finish();
}
