// SPDX-License-Identifier: GPL-2.0
/*
 * The cluster key file (key.h). The key is wiped from every buffer it
 * went through, error paths included.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "key.h"

int rdlock_key_read(const char *path, struct rdlock_cluster_key *k,
		    char *err, size_t errlen)
{
	unsigned char buf[RDLOCK_KEY_MAX + 1];
	struct stat st;
	ssize_t n, got = 0;
	int fd, ret = 0;

	memset(k, 0, sizeof(*k));
	k->version = RDLOCK_UAPI_VERSION;
	fd = open(path, O_RDONLY | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return ret;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		snprintf(err, errlen, "%s: not a regular file", path);
		goto out;
	}
	if (st.st_mode & 0077) {
		ret = -EPERM;
		snprintf(err, errlen,
			 "%s: group or others may access it (mode %04o): chmod 600",
			 path, (unsigned int)(st.st_mode & 07777));
		goto out;
	}
	/* One byte more than the longest key tells a longer file. */
	while (got < (ssize_t)sizeof(buf)) {
		n = read(fd, buf + got, sizeof(buf) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			goto out;
		}
		if (!n)
			break;
		got += n;
	}
	if (got < RDLOCK_KEY_MIN || got > RDLOCK_KEY_MAX) {
		ret = -EINVAL;
		snprintf(err, errlen, "%s: %s than %d bytes", path,
			 got < RDLOCK_KEY_MIN ? "shorter" : "longer",
			 got < RDLOCK_KEY_MIN ? RDLOCK_KEY_MIN : RDLOCK_KEY_MAX);
		goto out;
	}
	memcpy(k->key, buf, got);
	k->len = got;
out:
	explicit_bzero(buf, sizeof(buf));
	close(fd);
	return ret;
}

/* @n random bytes, blocking until the pool is initialised. */
static int get_random(unsigned char *b, size_t n)
{
	ssize_t got;

	while (n) {
		got = getrandom(b, n, 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		b += got;
		n -= got;
	}
	return 0;
}

/* fsync() the directory of @path. */
static int sync_dir(const char *path, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	char *slash;
	int fd, ret = 0;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd)) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
	}
	if (fd >= 0)
		close(fd);
	return ret;
}

int rdlock_key_write(const char *path, int force, char *err, size_t errlen)
{
	unsigned char key[RDLOCK_KEY_GEN_LEN];
	char tmp[PATH_MAX + 8];
	int fd, ret;

	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp)) {
		snprintf(err, errlen, "%s: path too long", path);
		return -ENAMETOOLONG;
	}
	/* mkstemp() makes it 0600, whatever the umask. */
	fd = mkstemp(tmp);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s (its directory)", path,
			 strerror(errno));
		return ret;
	}
	ret = get_random(key, sizeof(key));
	if (ret) {
		snprintf(err, errlen, "getrandom: %s", strerror(-ret));
		goto fail;
	}
	errno = 0;
	if (fchmod(fd, 0600) ||
	    write(fd, key, sizeof(key)) != (ssize_t)sizeof(key) || fsync(fd)) {
		ret = errno ? -errno : -EIO;
		snprintf(err, errlen, "%s: %s", tmp, strerror(-ret));
		goto fail;
	}
	if (close(fd)) {
		fd = -1;
		ret = -errno;
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		goto fail;
	}
	fd = -1;
	if (force ? rename(tmp, path) : link(tmp, path)) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s%s", path, strerror(errno),
			 errno == EEXIST ? " (--force replaces it)" : "");
		goto fail;
	}
	if (!force)
		unlink(tmp);
	explicit_bzero(key, sizeof(key));
	/* The new name to disk too. */
	return sync_dir(path, err, errlen);
fail:
	explicit_bzero(key, sizeof(key));
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return ret;
}
