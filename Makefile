# SPDX-License-Identifier: GPL-2.0
#
# make              modules (against KDIR), userspace tools and selftests
# make modules      rdlock.ko, rdlock_test.ko and, with KUnit, the KUnit suites
#                   (RDLOCK_FAULT_INJECTION=y: with the tests' fault injection,
#                   see Kbuild; never for packages)
# make check-style  sparse (C=2), checkpatch --strict and the layers'
#                   includes (scripts/check-layers.sh); fails on findings
# make test         the whole suite: scripts/run-tests.sh
# make dkms-install  rdlock.ko through DKMS, rebuilt for every new kernel
#                    (DKMS_KERNEL=VERSION: for that kernel, not the running one)
# make dkms-uninstall  remove it from DKMS and /usr/src
# make deb          the Debian packages rdlock-dkms and rdlock-tools
#                   (debian/), in the parent directory
# make install-tools  rdlockctl, the systemd unit, an example rdlock.conf,
#                     the man pages, the bash completion, the udev rule
#                     and sysusers.d file of /dev/rdlock's group

# The running kernel's build tree, else the newest Debian headers package:
# our hosts run a kernel without one, and modules are tested in guests.
ifeq ($(origin KDIR),undefined)
KDIR := /lib/modules/$(shell uname -r)/build
ifeq ($(wildcard $(KDIR)/Makefile),)
KDIR := $(shell ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n 1)
$(info rdlock: no build tree for the running kernel, using KDIR=$(KDIR))
endif
endif

# OCFS2's private headers for the stack plug-in: the copies in
# vendor/ocfs2 (scripts/ocfs2-headers.sh --check compares them with the
# stock kernel's source); empty: the plug-in is not built.
OCFS2_HEADERS ?= $(CURDIR)/vendor/ocfs2

KBUILD_FLAGS := -C $(KDIR) M=$(CURDIR) W=1 OCFS2_HEADERS=$(OCFS2_HEADERS)

.PHONY: all modules userspace selftests check-style checkpatch check-layers sparse test clean
.PHONY: dkms-add dkms-install dkms-uninstall install-tools deb

all: modules userspace selftests

modules:
	$(MAKE) $(KBUILD_FLAGS) modules

userspace:
	$(MAKE) -C userspace

selftests:
	$(MAKE) -C selftests/rdlock

check-style: sparse checkpatch check-layers

sparse:
	@set -e; log=$$(mktemp); \
	$(MAKE) $(KBUILD_FLAGS) C=2 modules 2>&1 | tee $$log; \
	if grep -E '(warning|error):' $$log; then \
		echo "sparse/W=1: findings above"; rm -f $$log; exit 1; fi; \
	rm -f $$log

checkpatch:
	scripts/checkpatch.sh

check-layers:
	scripts/check-layers.sh

test:
	scripts/run-tests.sh

clean:
	$(MAKE) $(KBUILD_FLAGS) clean
	$(MAKE) -C userspace clean
	$(MAKE) -C selftests/rdlock clean

# DKMS (Debian package dkms): the module's sources and dkms.conf go to
# /usr/src/rdlock-$(DKMS_VERSION); DKMS builds them for $(DKMS_KERNEL) and
# again for every kernel installed later. Re-running replaces that version.
DKMS_VERSION ?= $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
DKMS_KERNEL ?= $(shell uname -r)
DKMS_SRC := /usr/src/rdlock-$(DKMS_VERSION)

dkms-add:
	@command -v dkms > /dev/null || { echo "dkms-add: install the dkms package"; exit 1; }
	if [ -n "$$(dkms status -m rdlock -v $(DKMS_VERSION))" ]; then \
		dkms remove -m rdlock -v $(DKMS_VERSION) --all; fi
	rm -rf $(DKMS_SRC)
	mkdir -p $(DKMS_SRC)
	cp --parents Kbuild COPYING $$(find LICENSES kmod uapi vendor -type f \
		\( -name '*.[ch]' -o -path 'LICENSES/*' \)) $(DKMS_SRC)/
	sed 's/^PACKAGE_VERSION=.*/PACKAGE_VERSION="$(DKMS_VERSION)"/' dkms.conf \
		> $(DKMS_SRC)/dkms.conf
	dkms add -m rdlock -v $(DKMS_VERSION)

dkms-install: dkms-add
	dkms build -m rdlock -v $(DKMS_VERSION) -k $(DKMS_KERNEL)
	dkms install -m rdlock -v $(DKMS_VERSION) -k $(DKMS_KERNEL)

# debhelper and dh-dkms; scripts/deb-test.sh installs, upgrades and purges
# them in a chroot.
deb:
	dpkg-buildpackage -b -us -uc

dkms-uninstall:
	dkms remove -m rdlock -v $(DKMS_VERSION) --all
	rm -rf $(DKMS_SRC)

# rdlockctl, rdlock.service, /etc/rdlock/rdlock.conf.example, the man
# pages rdlockctl(8), rdlock.conf(5) and rdlock(7) (uncompressed), the
# bash completion, the udev rule that gives /dev/rdlock to the group
# "rdlock" and the sysusers.d file that makes the group, under
# $(DESTDIR); "systemd-sysusers", "udevadm control --reload",
# "systemctl daemon-reload" and "systemctl enable rdlock" after.
SBINDIR ?= /usr/sbin
UNITDIR ?= /lib/systemd/system
MANDIR ?= /usr/share/man
BASHCOMPDIR ?= /usr/share/bash-completion/completions
UDEVRULESDIR ?= /lib/udev/rules.d
SYSUSERSDIR ?= /usr/lib/sysusers.d

install-tools: userspace
	install -D -m 0755 userspace/rdlockctl $(DESTDIR)$(SBINDIR)/rdlockctl
	mkdir -p $(DESTDIR)$(UNITDIR)
	sed 's|/usr/sbin/rdlockctl|$(SBINDIR)/rdlockctl|' packaging/rdlock.service \
		> $(DESTDIR)$(UNITDIR)/rdlock.service
	install -D -m 0644 packaging/rdlock.conf.example \
		$(DESTDIR)/etc/rdlock/rdlock.conf.example
	install -D -m 0644 packaging/man/rdlockctl.8 $(DESTDIR)$(MANDIR)/man8/rdlockctl.8
	install -D -m 0644 packaging/man/rdlock.conf.5 $(DESTDIR)$(MANDIR)/man5/rdlock.conf.5
	install -D -m 0644 packaging/man/rdlock.7 $(DESTDIR)$(MANDIR)/man7/rdlock.7
	install -D -m 0644 packaging/rdlockctl.bash-completion \
		$(DESTDIR)$(BASHCOMPDIR)/rdlockctl
	install -D -m 0644 packaging/60-rdlock.rules \
		$(DESTDIR)$(UDEVRULESDIR)/60-rdlock.rules
	install -D -m 0644 packaging/rdlock.sysusers \
		$(DESTDIR)$(SYSUSERSDIR)/rdlock.conf
