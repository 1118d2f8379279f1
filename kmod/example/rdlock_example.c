// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock_example: a kernel client of rdlock's exported API, as a cluster
 * file system would use it, and a check of that API's contract.
 *
 * On load it opens a lockspace and runs each check below on lock names
 * that start with its "prefix" parameter (so that several nodes can run it
 * at once without meeting), prints one KTAP line per check to the kernel
 * log and fails to load if any check failed. Unloading closes the
 * lockspace.
 *
 *	insmod rdlock_example.ko lockspace=example prefix=node0-
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <rdlock/rdlock.h>

static char *lockspace = "example";
module_param(lockspace, charp, 0444);
MODULE_PARM_DESC(lockspace, "lockspace to open (created with update locks)");

static char *prefix = "";
module_param(prefix, charp, 0444);
MODULE_PARM_DESC(prefix, "prefix of every lock name");

static unsigned int iterations = 20;
module_param(iterations, uint, 0444);
MODULE_PARM_DESC(iterations, "lock/unlock rounds of the loop check");

static const struct rdlock_ls_attr example_attr = {
	.proto = RDLOCK_PROTO_BAKERY,
	.flags = RDLOCK_LS_UPDATE,
	.slots = 256,
};

static struct rdlock_ls *example_ls;
static unsigned int example_nr;
static unsigned int example_failed;

struct example_name {
	char buf[RDLOCK_RES_NAME_MAX + 1];
	size_t len;
};

static void example_name(struct example_name *n, const char *what)
{
	n->len = min_t(size_t, snprintf(n->buf, sizeof(n->buf), "%s%s",
					prefix, what),
		       RDLOCK_RES_NAME_MAX);
}

/* One KTAP line; @ok false also makes the load fail. */
static void example_report(bool ok, const char *what, long got, long want)
{
	example_nr++;
	if (ok) {
		pr_info("ok %u %s\n", example_nr, what);
		return;
	}
	example_failed++;
	pr_info("not ok %u %s (got %ld, want %ld)\n", example_nr, what, got,
		want);
}

/* Expect @lk to be an error pointer of @want (0: a lock, released here). */
static void example_expect(struct rdlock_lock *lk, long want, const char *what)
{
	long got = IS_ERR(lk) ? PTR_ERR(lk) : 0;

	if (!IS_ERR(lk))
		rdlock_unlock(lk);
	example_report(got == want, what, got, want);
}

static struct rdlock_lock *example_lock(const struct example_name *n,
					enum rdlock_lock_mode mode, u32 flags,
					u32 timeout_ms)
{
	struct rdlock_lock_opts opts = {
		.flags = flags,
		.timeout_ms = timeout_ms,
	};

	return rdlock_lock(example_ls, n->buf, n->len, mode, &opts);
}

static void example_check_bad_input(void)
{
	struct rdlock_ls_attr other = example_attr;
	struct rdlock_lock_opts bad = { .flags = RDLOCK_LKF_TRY,
					.timeout_ms = 1 };
	struct example_name n;
	struct rdlock_ls *ls;

	example_name(&n, "bad");
	example_expect(rdlock_lock(example_ls, n.buf, 0, RDLOCK_LOCK_SH, NULL),
		       -EINVAL, "empty name");
	example_expect(rdlock_lock(example_ls, n.buf, RDLOCK_RES_NAME_MAX + 1,
				   RDLOCK_LOCK_SH, NULL),
		       -EINVAL, "name too long");
	example_expect(rdlock_lock(example_ls, n.buf, n.len,
				   RDLOCK_LOCK_MODE_NR, NULL),
		       -EINVAL, "unknown mode");
	example_expect(rdlock_lock(example_ls, n.buf, n.len, RDLOCK_LOCK_SH,
				   &bad),
		       -EINVAL, "try with a timeout");
	bad = (struct rdlock_lock_opts){ .flags = RDLOCK_LKF_GATE };
	example_expect(rdlock_lock(example_ls, n.buf, n.len, RDLOCK_LOCK_SH,
				   &bad),
		       -EINVAL, "a gate in a lockspace without gates");
	bad = (struct rdlock_lock_opts){ .flags = RDLOCK_LKF_LVB };
	example_expect(rdlock_lock(example_ls, n.buf, n.len, RDLOCK_LOCK_SH,
				   &bad),
		       -EINVAL, "a value block in a lockspace without them");
	ls = rdlock_ls_open("bad/name", &example_attr);
	example_report(PTR_ERR(ls) == -EINVAL, "bad lockspace name",
		       PTR_ERR(ls), -EINVAL);
	other.proto = RDLOCK_PROTO_CASLOCK;
	ls = rdlock_ls_open(lockspace, &other);
	example_report(PTR_ERR(ls) == -EEXIST, "reopen with another protocol",
		       PTR_ERR(ls), -EEXIST);
}

static void example_check_conflicts(void)
{
	struct rdlock_lock *ex, *lk;
	struct example_name n;
	unsigned long start;
	long ms;

	example_name(&n, "conflict");
	ex = example_lock(&n, RDLOCK_LOCK_EX, 0, 0);
	example_report(!IS_ERR(ex), "exclusive lock", PTR_ERR_OR_ZERO(ex), 0);
	if (IS_ERR(ex))
		return;
	example_expect(example_lock(&n, RDLOCK_LOCK_EX, RDLOCK_LKF_TRY, 0),
		       -EAGAIN, "try exclusive beside exclusive");
	example_expect(example_lock(&n, RDLOCK_LOCK_SH, RDLOCK_LKF_TRY, 0),
		       -EAGAIN, "try shared beside exclusive");
	start = jiffies;
	lk = example_lock(&n, RDLOCK_LOCK_SH, 0, 200);
	ms = jiffies_to_msecs(jiffies - start);
	example_expect(lk, -ETIMEDOUT, "timed shared beside exclusive");
	example_report(ms >= 200, "timeout waited at least 200 ms", ms, 200);
	rdlock_unlock(ex);
	/* Abandoned tickets are finished in the background: wait for them. */
	example_expect(example_lock(&n, RDLOCK_LOCK_EX, 0, 10000), 0,
		       "exclusive after release");
}

static void example_check_update(void)
{
	struct rdlock_lock_opts try = { .flags = RDLOCK_LKF_TRY };
	struct rdlock_lock *up, *sh;
	struct example_name n;
	int ret;

	example_name(&n, "update");
	sh = example_lock(&n, RDLOCK_LOCK_SH, 0, 0);
	up = example_lock(&n, RDLOCK_LOCK_UP, RDLOCK_LKF_TRY, 0);
	example_report(!IS_ERR(sh) && !IS_ERR(up), "update beside shared",
		       IS_ERR(up) ? PTR_ERR(up) : PTR_ERR_OR_ZERO(sh), 0);
	if (IS_ERR(sh) || IS_ERR(up)) {
		if (!IS_ERR(sh))
			rdlock_unlock(sh);
		if (!IS_ERR(up))
			rdlock_unlock(up);
		return;
	}
	example_expect(example_lock(&n, RDLOCK_LOCK_UP, RDLOCK_LKF_TRY, 0),
		       -EAGAIN, "second update lock");
	ret = rdlock_convert(up, RDLOCK_LOCK_EX, &try);
	example_report(ret == -EAGAIN, "upgrade while a reader is in", ret,
		       -EAGAIN);
	example_report(rdlock_lock_mode(up) == RDLOCK_LOCK_UP,
		       "failed upgrade keeps update", rdlock_lock_mode(up),
		       RDLOCK_LOCK_UP);
	ret = rdlock_convert(sh, RDLOCK_LOCK_EX, NULL);
	example_report(ret == -EOPNOTSUPP, "shared to exclusive", ret,
		       -EOPNOTSUPP);
	rdlock_unlock(sh);
	ret = rdlock_convert(up, RDLOCK_LOCK_EX, NULL);
	example_report(!ret, "upgrade after the reader left", ret, 0);
	ret = rdlock_convert(up, RDLOCK_LOCK_EX, NULL);
	example_report(ret == -EALREADY, "upgrade twice", ret, -EALREADY);
	example_expect(example_lock(&n, RDLOCK_LOCK_SH, RDLOCK_LKF_TRY, 0),
		       -EAGAIN, "shared beside an upgraded update lock");
	ret = rdlock_convert(up, RDLOCK_LOCK_UP, NULL);
	example_report(!ret && rdlock_lock_mode(up) == RDLOCK_LOCK_UP,
		       "end the upgrade", ret, 0);
	rdlock_unlock(up);
}

struct example_async {
	struct completion done;
	atomic_t granted;
	atomic_t calls;
	int status;
	struct rdlock_lock *locks[2];
};

static void example_async_done(void *arg, int status, struct rdlock_lock *lk)
{
	struct example_async *a = arg;
	int i = atomic_inc_return(&a->calls) - 1;

	if (status) {
		a->status = status;
	} else {
		a->locks[i] = lk;
		atomic_inc(&a->granted);
	}
	if (i == 1)
		complete(&a->done);
}

static void example_check_async(void)
{
	struct example_async *a = kzalloc(sizeof(*a), GFP_KERNEL);
	struct example_name n;
	int i, ret;

	if (!a) {
		example_report(false, "async: memory", -ENOMEM, 0);
		return;
	}
	init_completion(&a->done);
	example_name(&n, "async");
	for (i = 0; i < 2; i++) {
		ret = rdlock_lock_async(example_ls, n.buf, n.len,
					RDLOCK_LOCK_SH, NULL,
					example_async_done, a);
		example_report(!ret, "async shared lock queued", ret, 0);
	}
	ret = rdlock_lock_async(example_ls, n.buf, n.len, RDLOCK_LOCK_SH, NULL,
				NULL, a);
	example_report(ret == -EINVAL, "async without callback", ret, -EINVAL);
	if (!wait_for_completion_timeout(&a->done, 60 * HZ)) {
		/* The callbacks still reference @a: leak it, don't free it. */
		example_report(false, "async completions", 0, 2);
		return;
	}
	example_report(atomic_read(&a->granted) == 2,
		       "two async readers granted together",
		       atomic_read(&a->granted), 2);
	for (i = 0; i < 2; i++)
		if (a->locks[i])
			rdlock_unlock(a->locks[i]);
	kfree(a);
}

static void example_check_loop(void)
{
	struct example_name n;
	unsigned int i, granted = 0;
	struct rdlock_lock *lk;

	example_name(&n, "loop");
	for (i = 0; i < iterations; i++) {
		lk = example_lock(&n, i % 3 ? RDLOCK_LOCK_SH : RDLOCK_LOCK_EX,
				  0, 0);
		if (IS_ERR(lk))
			break;
		granted++;
		rdlock_unlock(lk);
	}
	example_report(granted == iterations, "lock/unlock loop", granted,
		       iterations);
}

static int __init example_init(void)
{
	example_ls = rdlock_ls_open(lockspace, &example_attr);
	if (IS_ERR(example_ls)) {
		pr_err("cannot open lockspace %s: %pe\n", lockspace, example_ls);
		return PTR_ERR(example_ls);
	}
	example_check_bad_input();
	example_check_conflicts();
	example_check_update();
	example_check_async();
	example_check_loop();
	pr_info("%u checks, %u failed\n", example_nr, example_failed);
	if (example_failed) {
		rdlock_ls_close(example_ls);
		return -EINVAL;
	}
	return 0;
}

static void __exit example_exit(void)
{
	rdlock_ls_close(example_ls);
}

module_init(example_init);
module_exit(example_exit);

MODULE_DESCRIPTION("rdlock example client: the kernel API in use");
MODULE_LICENSE("GPL");
