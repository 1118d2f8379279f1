/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Agreement on the cluster's one atomic backend.
 *
 * CPU atomics and NIC atomics are not atomic with each other, so every node
 * must access every lock table through the same backend. Each node
 * advertises what it was asked for (module parameter backend=) and whether
 * its device can execute RDMA atomics posted from the kernel. Every node
 * evaluates rdlock_backend_resolve() over the same adverts (its own and one
 * per peer, learnt from the connection private data), so all agree without
 * another round of messages. Pure functions: KUnit tests them.
 */
#ifndef _RDLOCK_BACKEND_H
#define _RDLOCK_BACKEND_H

#include <linux/errno.h>
#include <linux/types.h>
#include <linux/rdlock.h>

/**
 * struct rdlock_backend_adv - what one node advertises
 * @mode: RDLOCK_BACKEND_VERBS or _TWOSIDED when forced, _NONE for auto.
 * @verbs_capable: the node's device passed the loopback atomic probe.
 * @soft_device: the node's device carries out verbs in the host's
 *	software (rxe, siw, rdmavt): its "remote" atomics run on the home
 *	node's CPU as the two-sided backend's do, and its own table's go
 *	through the device's packet path instead of being done in place.
 */
struct rdlock_backend_adv {
	u8 mode;
	bool verbs_capable;
	bool soft_device;
};

/**
 * rdlock_backend_compatible() - can two nodes ever share a backend?
 * @a: one node's advert.
 * @b: the other's.
 *
 * Used on every connection request so that a misconfigured peer is refused
 * at once, with a message, instead of being discovered later.
 */
static inline bool rdlock_backend_compatible(const struct rdlock_backend_adv *a,
					     const struct rdlock_backend_adv *b)
{
	if (a->mode != RDLOCK_BACKEND_NONE && b->mode != RDLOCK_BACKEND_NONE &&
	    a->mode != b->mode)
		return false;
	if ((a->mode == RDLOCK_BACKEND_VERBS || b->mode == RDLOCK_BACKEND_VERBS) &&
	    !(a->verbs_capable && b->verbs_capable))
		return false;
	return true;
}

/**
 * rdlock_backend_resolve() - the backend a set of nodes agrees on
 * @adv: one advert per node, this node's included.
 * @n: number of adverts.
 *
 * A forced mode wins over auto; with only auto nodes, verbs is chosen when
 * every device can do it in hardware, otherwise the two-sided backend: a
 * software device offloads nothing, so one-sided atomics only make the
 * home's accesses to its own table dearer.
 *
 * Return: RDLOCK_BACKEND_VERBS or _TWOSIDED, -EPROTO when two nodes force
 * different backends, -EOPNOTSUPP when verbs is forced but a device cannot.
 */
static inline int rdlock_backend_resolve(const struct rdlock_backend_adv *adv,
					 unsigned int n)
{
	u8 forced = RDLOCK_BACKEND_NONE;
	bool all_capable = true;
	bool any_soft = false;
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (adv[i].mode != RDLOCK_BACKEND_NONE) {
			if (forced != RDLOCK_BACKEND_NONE && forced != adv[i].mode)
				return -EPROTO;
			forced = adv[i].mode;
		}
		all_capable &= adv[i].verbs_capable;
		any_soft |= adv[i].soft_device;
	}
	if (forced == RDLOCK_BACKEND_VERBS)
		return all_capable ? RDLOCK_BACKEND_VERBS : -EOPNOTSUPP;
	if (forced == RDLOCK_BACKEND_TWOSIDED)
		return RDLOCK_BACKEND_TWOSIDED;
	return all_capable && !any_soft ? RDLOCK_BACKEND_VERBS :
					  RDLOCK_BACKEND_TWOSIDED;
}

/**
 * rdlock_backend_admits() - may a node join a cluster whose backend is fixed?
 * @backend: the resolved backend.
 * @adv: the joining node's advert.
 *
 * A node that restarts with other settings must not silently mix backends.
 */
static inline bool rdlock_backend_admits(int backend,
					 const struct rdlock_backend_adv *adv)
{
	if (backend == RDLOCK_BACKEND_VERBS)
		return adv->mode != RDLOCK_BACKEND_TWOSIDED && adv->verbs_capable;
	if (backend == RDLOCK_BACKEND_TWOSIDED)
		return adv->mode != RDLOCK_BACKEND_VERBS;
	return false;
}

#endif /* _RDLOCK_BACKEND_H */
