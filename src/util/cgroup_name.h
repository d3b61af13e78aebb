/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Cgroup names in the two forms of upstream's cm.CgroupName: the agent
 * names a cgroup by its components, written as the cgroupfs driver writes
 * them ("/ck/kubepods/burstable/pod<uid>"; "" is the root), and each driver
 * turns that into the path the cgroup has in the hierarchy:
 *
 *   cgroupfs  /ck/kubepods/burstable/pod1234-56
 *   systemd   /ck.slice/ck-kubepods.slice/ck-kubepods-burstable.slice/
 *             ck-kubepods-burstable-pod1234_56.slice
 *
 * (upstream CgroupName.ToCgroupfs / ToSystemd: a systemd slice's name is its
 * ancestors' components joined by '-', so a '-' inside a component is
 * escaped as '_'; ParseSystemdToCgroupName reads a slice name back.)
 *
 * Pure functions: shared by the container manager (src/cm), which makes the
 * cgroups, and the stats provider (src/stats), which reads them.
 */
#ifndef CK_UTIL_CGROUP_NAME_H
#define CK_UTIL_CGROUP_NAME_H

#include <stdbool.h>

/* The cgroup's path in the hierarchy for the driver (new string): the name
 * itself for cgroupfs, the expanded slice path for systemd ("" → ""). */
char *cgroup_name_literal(const char *name, bool systemd);

/* The systemd unit of a cgroup name: "ck-kubepods-burstable.slice"
 * (new string), "-.slice" for the root. */
char *cgroup_name_unit(const char *name);

/* The component a child cgroup's directory entry names (new string), as
 * upstream reads it back: for systemd the last '-' part of a ".slice" entry
 * with '_' unescaped to '-' ("ck-kubepods-pod12_34.slice" → "pod12-34"), NULL
 * for an entry that is not a slice; for cgroupfs the entry itself. */
char *cgroup_name_child(const char *entry, bool systemd);

#endif
