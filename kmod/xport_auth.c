// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock transport: the cluster key.
 *
 * An optional secret shared by every node of a cluster. With it, a
 * connection is made only between two nodes that each proved they know
 * the key, by HMAC-SHA256 over the other side's fresh nonce, both
 * requests' fields (cluster id, both node ids, tables), the requester's
 * queue pair and both ends' GIDs, and the direction; the key itself never
 * leaves the node. The exchange is in xport_cm.c and
 * design.rst, "Peer authentication".
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/hash.h>
#include <linux/err.h>
#include <linux/string.h>

#include "xport-pri.h"

/* Labels keep a proof made for one direction useless in the other. */
static const char rdlock_auth_req_label[] = "rdlock cluster key: request v4";
static const char rdlock_auth_rep_label[] = "rdlock cluster key: reply v4";
static const char rdlock_auth_fenced_label[] =
	"rdlock cluster key: declared down v1";
static const char rdlock_auth_table_req_label[] =
	"rdlock cluster key: requester's table v1";
static const char rdlock_auth_table_acc_label[] =
	"rdlock cluster key: acceptor's table v1";

/**
 * rdlock_auth_set_key() - set or clear the cluster key
 * @key: the key; the caller zeroes its copy.
 * @len: its length, 0 to clear the key.
 *
 * Only while the cluster is down (rdlock_cl.cfg_mutex held): no
 * connection uses the transform then.
 *
 * Return: 0 or a negative errno (-ENOENT: the kernel has no hmac(sha256)).
 */
int rdlock_auth_set_key(const u8 *key, unsigned int len)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct crypto_shash *tfm = NULL;
	int ret;

	lockdep_assert_held(&cl->cfg_mutex);
	if (len) {
		tfm = crypto_alloc_shash("hmac(sha256)", 0, 0);
		if (IS_ERR(tfm)) {
			pr_err("cannot set the cluster key: no hmac(sha256) (%ld)\n",
			       PTR_ERR(tfm));
			return PTR_ERR(tfm);
		}
		ret = crypto_shash_setkey(tfm, key, len);
		if (ret) {
			crypto_free_shash(tfm);
			return ret;
		}
	}
	if (!tfm && !cl->auth_tfm)
		return 0;
	/* crypto_free_shash() zeroes the keyed state (kfree_sensitive). */
	if (cl->auth_tfm)
		crypto_free_shash(cl->auth_tfm);
	WRITE_ONCE(cl->auth_tfm, tfm);
	pr_info("cluster key %s\n", tfm ? "set" : "cleared");
	return 0;
}

static int rdlock_auth_mac(const char *label, size_t label_len,
			   const u8 *challenge, const void *a, size_t alen,
			   const void *b, size_t blen, u8 *out)
{
	struct crypto_shash *tfm = rdlock_cl.auth_tfm;
	int ret;

	if (!tfm)
		return -ENOKEY;
	{
		SHASH_DESC_ON_STACK(desc, tfm);

		desc->tfm = tfm;
		ret = crypto_shash_init(desc);
		if (!ret)
			ret = crypto_shash_update(desc, label, label_len);
		if (!ret)
			ret = crypto_shash_update(desc, challenge,
						  RDLOCK_AUTH_NONCE_LEN);
		if (!ret)
			ret = crypto_shash_update(desc, a, alen);
		if (!ret && b)
			ret = crypto_shash_update(desc, b, blen);
		if (!ret)
			ret = crypto_shash_final(desc, out);
		shash_desc_zero(desc);
	}
	return ret;
}

/**
 * rdlock_auth_req_mac() - the requester's proof
 * @challenge: the acceptor's nonce.
 * @req: the request, its mac field ignored.
 * @bind: the endpoint the request comes from.
 * @mac: receives RDLOCK_AUTH_REQ_MAC_LEN bytes.
 *
 * Return: 0 or a negative errno.
 */
int rdlock_auth_req_mac(const u8 *challenge,
			const struct rdlock_cm_req_keyed *req,
			const struct rdlock_auth_bind *bind, u8 *mac)
{
	struct rdlock_cm_req_keyed r = *req;
	u8 full[RDLOCK_AUTH_MAC_LEN];
	int ret;

	memset(r.mac, 0, sizeof(r.mac));
	ret = rdlock_auth_mac(rdlock_auth_req_label,
			      sizeof(rdlock_auth_req_label), challenge,
			      &r, sizeof(r), bind, sizeof(*bind), full);
	if (!ret)
		memcpy(mac, full, RDLOCK_AUTH_REQ_MAC_LEN);
	memzero_explicit(full, sizeof(full));
	return ret;
}

/**
 * rdlock_auth_rep_mac() - the acceptor's proof
 * @challenge: the acceptor's nonce the request answered.
 * @req: the request as sent, requester's nonce and proof included.
 * @rep: the reply's private data.
 * @mac: receives RDLOCK_AUTH_MAC_LEN bytes.
 *
 * Return: 0 or a negative errno.
 */
int rdlock_auth_rep_mac(const u8 *challenge,
			const struct rdlock_cm_req_keyed *req,
			const struct rdlock_cm_pdata *rep, u8 *mac)
{
	return rdlock_auth_mac(rdlock_auth_rep_label,
			       sizeof(rdlock_auth_rep_label), challenge,
			       req, sizeof(*req), rep, sizeof(*rep), mac);
}

/**
 * rdlock_auth_fenced_mac() - the acceptor's proof that it declared us down
 * @challenge: the acceptor's nonce the request answered.
 * @req: the request as sent, requester's nonce and proof included.
 * @mac: receives RDLOCK_AUTH_MAC_LEN bytes.
 *
 * A refusal is not authenticated by the CM: this proof makes the one
 * that ends the requester's cluster epoch (RDLOCK_REJ_FENCED) answer that
 * request and no other, from a node that knows the key.
 *
 * Return: 0 or a negative errno.
 */
int rdlock_auth_fenced_mac(const u8 *challenge,
			   const struct rdlock_cm_req_keyed *req, u8 *mac)
{
	return rdlock_auth_mac(rdlock_auth_fenced_label,
			       sizeof(rdlock_auth_fenced_label), challenge,
			       req, sizeof(*req), NULL, 0, mac);
}

/**
 * rdlock_auth_table_mac() - the proof a table message carries
 * @challenge: the acceptor's nonce the connection's request answered.
 * @req: that request, its nonce and proof included.
 * @from_req: the message is the requester's (else the acceptor's).
 * @addr: the table's address in the message.
 * @rkey: the key to it in the message.
 * @mac: receives RDLOCK_AUTH_REQ_MAC_LEN bytes.
 *
 * Messages on the queue pair are not authenticated by the transport:
 * this makes the one that says where the sender's table is and with which
 * key (RDLOCK_WIRE_TABLE) come from a node that knows the key, on this
 * connection, in this direction. Softirq or process context.
 *
 * Return: 0 or a negative errno.
 */
int rdlock_auth_table_mac(const u8 *challenge,
			  const struct rdlock_cm_req_keyed *req, bool from_req,
			  u64 addr, u32 rkey, u8 *mac)
{
	struct {
		__le64 addr;
		__le32 rkey;
	} __packed t = { cpu_to_le64(addr), cpu_to_le32(rkey) };
	const char *label = from_req ? rdlock_auth_table_req_label :
				       rdlock_auth_table_acc_label;
	size_t label_len = from_req ? sizeof(rdlock_auth_table_req_label) :
				      sizeof(rdlock_auth_table_acc_label);
	u8 full[RDLOCK_AUTH_MAC_LEN];
	int ret;

	ret = rdlock_auth_mac(label, label_len, challenge, req, sizeof(*req),
			      &t, sizeof(t), full);
	if (!ret)
		memcpy(mac, full, RDLOCK_AUTH_REQ_MAC_LEN);
	memzero_explicit(full, sizeof(full));
	return ret;
}
