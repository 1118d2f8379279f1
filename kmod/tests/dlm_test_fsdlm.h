/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdlock_dlm_test: the stock kernel's fs/dlm beside rdlock's DLM, for
 * side-by-side figures (dlm_test_fsdlm.c).
 */
#ifndef _RDLOCK_DLM_TEST_FSDLM_H
#define _RDLOCK_DLM_TEST_FSDLM_H

struct dt_fsdlm;

long dt_fsdlm_fill(struct dt_fsdlm **fsdlm, void __user *argp);
void dt_fsdlm_release(struct dt_fsdlm **fsdlm);

#endif /* _RDLOCK_DLM_TEST_FSDLM_H */
