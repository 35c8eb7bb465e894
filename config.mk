# The one place the target kernel is pinned. Everything else (the dependency
# installer, the module build, the guest runner) reads KVER from here.
KVER := 6.12.117+deb12-amd64

# Where the unpacked kernel image, modules and headers live. Shared by every
# checkout on the machine so that a fresh clone does not fetch them again.
WSE_DEPS ?= /var/cache/wse/$(KVER)

# The release: what --version prints, libwse's pkg-config version, the DKMS
# package version. libwse's soname changes with WSE_SOVERSION alone, when
# its ABI breaks.
WSE_VERSION := 0.1.0
WSE_SOVERSION := 0
