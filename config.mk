# The one place the target kernel is pinned. Everything else (the dependency
# installer, the module build, the guest runner) reads KVER from here.
KVER := 6.12.117+deb12-amd64

# Where the unpacked kernel image, modules and headers live. Shared by every
# checkout on the machine so that a fresh clone does not fetch them again.
WSE_DEPS ?= /var/cache/wse/$(KVER)
