/* Kernel types for CO-RE, per architecture. Regenerate with `make vmlinux`
 * (bpftool btf dump of /sys/kernel/btf/vmlinux); CO-RE relocations make one
 * dump work across kernel versions. */
#if defined(__TARGET_ARCH_x86)
#include "vmlinux_x86.h"
#elif defined(__TARGET_ARCH_arm64)
#include "vmlinux_arm64.h"
#else
#error "latwhy: no vmlinux.h for this architecture; run make vmlinux"
#endif
