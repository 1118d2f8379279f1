/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A field case of an ioctl's argument: up to UAPI_CASE_POKES fields of a
 * valid argument changed, and the errno its pure check returns. The
 * tables of uapi_cases.h (lockspaces and locks) and uapi_admin_cases.h
 * (the cluster) are made of them; KUnit and the kselftest apply them
 * with uapi_case_apply(). Nothing here uses KUnit or libc: the includer
 * provides offsetof() and memcpy().
 */
#ifndef _RDLOCK_TESTS_UAPI_FIELD_CASE_H
#define _RDLOCK_TESTS_UAPI_FIELD_CASE_H

#include <linux/types.h>

#define UAPI_CASE_POKES	3

/* @size bytes of @val (little or big endian alike) at byte @off. */
struct uapi_poke {
	unsigned short off;
	unsigned short size;
	__u64 val;
};

/**
 * struct uapi_case - one change to a valid argument and its verdict
 * @what: the change, as the runners print it.
 * @p: the fields changed; a size of 0 ends the list.
 * @err: errno (positive) of the pure check; 0 if it accepts the argument.
 */
struct uapi_case {
	const char *what;
	struct uapi_poke p[UAPI_CASE_POKES];
	int err;
};

/*
 * Field @field of @type, of @size bytes, set to @v. The size is spelt
 * out by each table header's F (4), F8, F16 and F64: taking it from the field
 * would name the field twice.
 */
#define UAPI_POKE(type, field, size, v)	{ offsetof(type, field), size, (v) }

static inline void uapi_case_apply(void *arg, const struct uapi_case *c)
{
	const struct uapi_poke *p;
	__u8 v8;
	__u16 v16;
	__u32 v32;
	int i;

	for (i = 0; i < UAPI_CASE_POKES && c->p[i].size; i++) {
		p = &c->p[i];
		v8 = p->val;
		v16 = p->val;
		v32 = p->val;
		if (p->size == 1)
			memcpy((char *)arg + p->off, &v8, 1);
		else if (p->size == 2)
			memcpy((char *)arg + p->off, &v16, 2);
		else if (p->size == 4)
			memcpy((char *)arg + p->off, &v32, 4);
		else
			memcpy((char *)arg + p->off, &p->val, 8);
	}
}

#define UAPI_U32_MAX	0xffffffffULL

#endif /* _RDLOCK_TESTS_UAPI_FIELD_CASE_H */
