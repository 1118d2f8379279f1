/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdlock DLM tracepoints: the callbacks a DLM user gets, as delivered
 * (fs/dlm's dlm_ast and dlm_bast), with the resource's hash (its name
 * may be gone by a final AST) and the lock's hold time. Enable with
 * /sys/kernel/tracing/events/rdlock_dlm/.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rdlock_dlm

#if !defined(_RDLOCK_TRACE_DLM_H) || defined(TRACE_HEADER_MULTI_READ)
#define _RDLOCK_TRACE_DLM_H

#include <linux/tracepoint.h>

DECLARE_EVENT_CLASS(rdlock_dlm_cb_class,
		    TP_PROTO(const char *ls, u64 hash, u32 lkid, int grmode,
			     int val, u32 hold_ms),
		    TP_ARGS(ls, hash, lkid, grmode, val, hold_ms),
		    TP_STRUCT__entry(__string(ls, ls)
				     __field(u64, hash)
				     __field(u32, lkid)
				     __field(int, grmode)
				     __field(int, val)
				     __field(u32, hold_ms)),
		    TP_fast_assign(__assign_str(ls, ls);
				   __entry->hash = hash;
				   __entry->lkid = lkid;
				   __entry->grmode = grmode;
				   __entry->val = val;
				   __entry->hold_ms = hold_ms),
		    TP_printk("ls=%s res=%016llx lkid=%x grmode=%d val=%d hold_ms=%u",
			      __get_str(ls), __entry->hash, __entry->lkid,
			      __entry->grmode, __entry->val, __entry->hold_ms));

/* An AST is called: val is sb_status, grmode the mode now granted. */
DEFINE_EVENT(rdlock_dlm_cb_class, rdlock_dlm_ast,
	     TP_PROTO(const char *ls, u64 hash, u32 lkid, int grmode,
		      int val, u32 hold_ms),
	     TP_ARGS(ls, hash, lkid, grmode, val, hold_ms));

/* A BAST is called: val is the blocked mode. */
DEFINE_EVENT(rdlock_dlm_cb_class, rdlock_dlm_bast,
	     TP_PROTO(const char *ls, u64 hash, u32 lkid, int grmode,
		      int val, u32 hold_ms),
	     TP_ARGS(ls, hash, lkid, grmode, val, hold_ms));

#endif /* _RDLOCK_TRACE_DLM_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace_dlm
#include <trace/define_trace.h>
