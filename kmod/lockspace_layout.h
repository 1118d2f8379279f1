/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdlock lockspaces: where a placed lock lives (design.rst, "Placement").
 * Pure arithmetic, shared by lockspace_name.c and its KUnit tests.
 */
#ifndef _RDLOCK_LOCKSPACE_LAYOUT_H
#define _RDLOCK_LOCKSPACE_LAYOUT_H

#include <linux/types.h>

/*
 * The area of a placer's region that holds the placed entries of @home's
 * entries (positions in the ascending node list, @home != @placer): area
 * 0 is the placer's own entries, areas 1 .. nodes - 1 the other homes'.
 */
static inline u32 rdlock_ls_place_area(u32 home, u32 placer)
{
	return home < placer ? home + 1 : home;
}

/**
 * rdlock_ls_placed_tslot() - the tag word slot of a placed entry
 * @base: the lockspace region's first slot (the same on every node).
 * @entry_slots: slots of one entry.
 * @entries: entries per area.
 * @home: position of the entry's home in the node list.
 * @placer: position of the node that claimed it (not @home).
 * @tslot: the entry's tag word slot on @home (area 0).
 *
 * Return: the slot on @placer where the placed entry starts; its lock
 * word follows, its value block ends it, as in an entry.
 */
static inline u32 rdlock_ls_placed_tslot(u32 base, u32 entry_slots,
					 u32 entries, u32 home, u32 placer,
					 u32 tslot)
{
	return base + entry_slots *
	       (rdlock_ls_place_area(home, placer) * entries +
		(tslot - base) / entry_slots);
}

#endif /* _RDLOCK_LOCKSPACE_LAYOUT_H */
