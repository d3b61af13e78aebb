/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The decisions of an in-place resize (upstream allocation_manager.go
 * handlePodResourcesResize and sortPendingResizes), pure so that they are
 * unit-tested from tables; src/kubelet/resize.c applies them on the sync
 * loop.
 */
#ifndef CK_KUBELET_RESIZE_H
#define CK_KUBELET_RESIZE_H

#include "api/pod.h"
#include "kubelet/admission.h"

#include <jansson.h>
#include <stdint.h>

#define RESIZE_REASON_DEFERRED "Deferred"
#define RESIZE_REASON_INFEASIBLE "Infeasible"

enum resize_outcome {
        RESIZE_NONE,       /* the spec asks for what is allocated */
        RESIZE_ALLOCATED,  /* admitted: the spec becomes the allocation */
        RESIZE_DEFERRED,   /* does not fit now: tried again later */
        RESIZE_INFEASIBLE, /* can never fit here: tried again at the next change */
};

struct resize_decision {
        enum resize_outcome outcome;
        const char *reason; /* RESIZE_REASON_*, NULL for NONE and ALLOCATED */
        char message[1024]; /* upstream's wording */
};

/* pod: the spec as its source has it; alloc: its allocation
 * ({"<container>": resources}, NULL: none recorded).  others: the other
 * active pods as allocated, actual[i] what active pod i's containers were
 * given (may be NULL, as may each entry); node: the allocatable amounts. */
void resize_decide(const struct pod *pod, const json_t *alloc, struct pod *const *others,
                   const json_t *const *actual, size_t n_others, const struct admission_node *node,
                   struct resize_decision *out);

/* A pending resize, for the order they are tried in. */
struct resize_candidate {
        const struct pod *desired;   /* the spec */
        const struct pod *allocated; /* the spec with the allocated resources */
        int64_t pending_since_ns;    /* PodResizePending's transition (0: none) */
};
/* upstream sortPendingResizes: those that raise no request first, then by
 * priority, Guaranteed before the others, then the longest pending (none
 * last); <0, 0, >0 as strcmp. */
int resize_compare(const struct resize_candidate *a, const struct resize_candidate *b);

#endif
