/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdlock tracepoints: the life of a lock as the lockspace layer sees it.
 * Enable with /sys/kernel/tracing/events/rdlock/.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rdlock

#if !defined(_RDLOCK_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _RDLOCK_TRACE_H

#include <linux/tracepoint.h>

#include "lockspace-pri.h"

DECLARE_EVENT_CLASS(rdlock_lock_class,
		    TP_PROTO(const struct rdlock_lock *lk, int status),
		    TP_ARGS(lk, status),
		    TP_STRUCT__entry(__string(ls, lk->ls->name)
				     __field(u32, home)
				     __field(u32, slot)
				     __field(u32, mode)
				     __field(u32, remote_ops)
				     __field(u32, polls)
				     __field(int, status)
				     __field(u32, len)
				     __array(u8, name, RDLOCK_RES_NAME_MAX)),
		    TP_fast_assign(__assign_str(ls, lk->ls->name);
				   __entry->home = lk->ticket.node;
				   __entry->slot = lk->ticket.slot;
				   __entry->mode = rdlock_lock_mode(lk);
				   __entry->remote_ops = lk->ticket.remote_ops;
				   __entry->polls = lk->ticket.polls;
				   __entry->status = status;
				   __entry->len = lk->res->len;
				   memcpy(__entry->name, lk->res->name,
					  RDLOCK_RES_NAME_MAX)),
		    TP_printk("ls=%s name=%s mode=%s home=%u slot=%u ops=%u polls=%u status=%d",
			      __get_str(ls),
			      __print_hex(__entry->name, __entry->len),
			      __print_symbolic(__entry->mode,
					       { RDLOCK_LOCK_SH, "sh" },
					       { RDLOCK_LOCK_EX, "ex" },
					       { RDLOCK_LOCK_UP, "up" }),
			      __entry->home, __entry->slot,
			      __entry->remote_ops, __entry->polls,
			      __entry->status));

/* A lock is asked for: its name is resolved, its ticket not yet taken. */
DEFINE_EVENT(rdlock_lock_class, rdlock_lock_request,
	     TP_PROTO(const struct rdlock_lock *lk, int status),
	     TP_ARGS(lk, status));

/* The acquisition ended: status 0 granted, else the error. */
DEFINE_EVENT(rdlock_lock_class, rdlock_lock_done,
	     TP_PROTO(const struct rdlock_lock *lk, int status),
	     TP_ARGS(lk, status));

/* An upgrade ended: status 0 upgraded, else the error. */
DEFINE_EVENT(rdlock_lock_class, rdlock_convert_done,
	     TP_PROTO(const struct rdlock_lock *lk, int status),
	     TP_ARGS(lk, status));

/* A lock is about to be released. */
DEFINE_EVENT(rdlock_lock_class, rdlock_unlock,
	     TP_PROTO(const struct rdlock_lock *lk, int status),
	     TP_ARGS(lk, status));

#endif /* _RDLOCK_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
