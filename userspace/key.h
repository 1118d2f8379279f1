/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cluster key file: RDLOCK_KEY_MIN to RDLOCK_KEY_MAX bytes of any
 * value (e.g. head -c 32 /dev/urandom), readable by its owner only.
 */
#ifndef _RDLOCK_KEY_H
#define _RDLOCK_KEY_H

#include <stddef.h>
#include <linux/rdlock.h>

/* Room for any error message of rdlock_key_read(). */
#define RDLOCK_KEY_ERR_MAX	192

/*
 * Read the key file at @path into @k (version, len, key; the rest zero).
 * Refuses what is not a regular file, a file group or others may read
 * or write, and a length out of range.
 *
 * Return: 0, or a negative errno with a message in @err.
 */
int rdlock_key_read(const char *path, struct rdlock_cluster_key *k,
		    char *err, size_t errlen);

/* Where "rdlockctl keygen" writes by default, and its key's length. */
#define RDLOCK_KEY_DEFAULT_PATH	"/etc/rdlock/cluster.key"
#define RDLOCK_KEY_GEN_LEN	32

/*
 * Write a new key of RDLOCK_KEY_GEN_LEN random bytes (getrandom()) to
 * @path, mode 0600, whole or not at all: written and synced under a
 * temporary name in the same directory, then linked to @path (@force 0:
 * an existing @path is kept, -EEXIST) or renamed over it (@force 1).
 *
 * Return: 0, or a negative errno with a message in @err.
 */
int rdlock_key_write(const char *path, int force, char *err, size_t errlen);

#endif /* _RDLOCK_KEY_H */
