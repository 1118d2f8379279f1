// SPDX-License-Identifier: GPL-2.0
/*
 * The cluster key file (key.h). The key is wiped from every buffer it
 * went through, error paths included.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
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
