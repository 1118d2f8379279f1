# SPDX-License-Identifier: GPL-2.0
#
# make              modules (against KDIR), userspace tools and selftests
# make modules      rdlock.ko, rdlock_test.ko and, with KUnit, the KUnit suites
# make check-style  sparse (C=2) and checkpatch --strict; fails on findings
# make test         the whole suite: scripts/run-tests.sh

# The running kernel's build tree, else the newest Debian headers package:
# our hosts run a kernel without one, and modules are tested in guests.
ifeq ($(origin KDIR),undefined)
KDIR := /lib/modules/$(shell uname -r)/build
ifeq ($(wildcard $(KDIR)/Makefile),)
KDIR := $(shell ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n 1)
$(info rdlock: no build tree for the running kernel, using KDIR=$(KDIR))
endif
endif

KBUILD_FLAGS := -C $(KDIR) M=$(CURDIR) W=1

.PHONY: all modules userspace selftests check-style checkpatch sparse test clean

all: modules userspace selftests

modules:
	$(MAKE) $(KBUILD_FLAGS) modules

userspace:
	$(MAKE) -C userspace

selftests:
	$(MAKE) -C selftests/rdlock

check-style: sparse checkpatch

sparse:
	@set -e; log=$$(mktemp); \
	$(MAKE) $(KBUILD_FLAGS) C=2 modules 2>&1 | tee $$log; \
	if grep -E '(warning|error):' $$log; then \
		echo "sparse/W=1: findings above"; rm -f $$log; exit 1; fi; \
	rm -f $$log

checkpatch:
	scripts/checkpatch.sh

test:
	scripts/run-tests.sh

clean:
	$(MAKE) $(KBUILD_FLAGS) clean
	$(MAKE) -C userspace clean
	$(MAKE) -C selftests/rdlock clean
