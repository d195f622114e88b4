#!/usr/bin/env bash
# Boot latwhy on other kernels under QEMU and run its three modes there
# against a lab server with an injected cause (a CPU hog on its CPU: sched):
# the live trace, record then report of the capture, and serve with one
# scrape.
#
#   tools/kernels/run.sh                     Debian 12's 6.1 generic + 6.1 PREEMPT_RT
#   tools/kernels/run.sh --all               Debian 11's 5.10, Debian 12's 6.1 and
#                                            6.1 PREEMPT_RT, Debian 13's 6.12, and
#                                            Debian 12's arm64 6.1
#   tools/kernels/run.sh --kernel VMLINUZ    just this kernel (repeatable)
#
# Options:
#   --all            the five kernels above
#   --only SPEC      this Debian kernel alone, SUITE:ARCH:PACKAGE (repeatable),
#                    e.g. bullseye:amd64:linux-image-amd64
#   --kernel PATH    boot this bzImage/vmlinuz (x86) or Image (arm64: its
#                    folder's "arch" file says so, as fetched ones have)
#   --timeout SEC    per-boot timeout (default 600, env LATWHY_BOOT_TIMEOUT;
#                    a boot takes 17-66 s under TCG)
#   --no-build       do not run make first
#   --debug          kernel messages on, latwhy -v in each mode's output
#   --append ARGS    add ARGS to the kernel command line
#   -h, --help       this help
#
# Environment:
#   LATWHY_KERNEL_CACHE  where .debs and extracted kernels go
#                        (default /var/cache/latwhy-kernels, never the repo)
#   LATWHY_QEMU_ACCEL    kvm or tcg (default: kvm if /dev/kvm is usable; the
#                        arm64 guest is always TCG)
#
# Each boot's serial console goes to tools/kernels/out/<kernel>.log; one
# line per kernel is printed:
#   PASS <uname -r>[ (arm64)]: trace N requests, report ok, serve ok (TIER)
#   FAIL <uname -r>[ (arm64)]: <what failed>
# (a PASS also means that with /sys/kernel/btf hidden latwhy refused in
# one line saying so). N is the live trace's requests, slow or not; the
# trace and the report must name sched (the hog) as the dominant cause,
# and the scrape count slow requests.
# Exits non-zero if any kernel failed.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck disable=SC2034 # lib.sh names the program by it
LIB_PROG=run.sh
# shellcheck source=tools/kernels/lib.sh
. "$HERE/lib.sh" # CACHE, log, die, install_host_tools, fetch_kernel, choose_accel
OUT=$HERE/out
TIMEOUT=${LATWHY_BOOT_TIMEOUT:-}
BUILD=1
# noirqdebug: on PREEMPT_RT the 8250's handler is a thread; flooding ttyS0
# under TCG makes it return IRQ_NONE often enough that the kernel reports
# "irq 4: nobody cared", disables IRQ 4 and the console stalls for good
# (reproduced with a plain `cat` of 5000 lines, no latwhy involved).
APPEND="quiet panic=-1 noirqdebug"
EXTRA_APPEND=""
SPECS=()   # SUITE:ARCH:PACKAGE, a Debian kernel (a metapackage or an image)
KERNELS=() # ARCH:PATH, to boot
DEFAULT_SPECS=(bookworm:amd64:linux-image-amd64 bookworm:amd64:linux-image-rt-amd64)
ALL_SPECS=(bullseye:amd64:linux-image-amd64 "${DEFAULT_SPECS[@]}"
	trixie:amd64:linux-image-amd64 bookworm:arm64:linux-image-arm64)

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }

# kernel_arch PATH: amd64 or arm64, from the "arch" file fetch_kernel leaves
kernel_arch() {
	if [ -s "$(dirname "$1")/arch" ]; then cat "$(dirname "$1")/arch"; else echo amd64; fi
}

while [ $# -gt 0 ]; do
	case $1 in
	--all) SPECS+=("${ALL_SPECS[@]}"); shift ;;
	--only) [ $# -ge 2 ] || { echo "run.sh: --only needs SUITE:ARCH:PACKAGE" >&2; exit 2; }
		SPECS+=("$2"); shift 2 ;;
	--kernel) [ $# -ge 2 ] || { echo "run.sh: --kernel needs a path" >&2; exit 2; }
		k=$(realpath -m "$2"); KERNELS+=("$(kernel_arch "$k"):$k"); shift 2 ;;
	--kernel=*) k=$(realpath -m "${1#--kernel=}"); KERNELS+=("$(kernel_arch "$k"):$k"); shift ;;
	--timeout) [ $# -ge 2 ] || { echo "run.sh: --timeout needs seconds" >&2; exit 2; }
		TIMEOUT=$2; shift 2 ;;
	--no-build) BUILD=0; shift ;;
	--debug) APPEND="panic=-1 noirqdebug latwhy.debug"; shift ;;
	--append) [ $# -ge 2 ] || { echo "run.sh: --append needs kernel arguments" >&2; exit 2; }
		EXTRA_APPEND+=" $2"; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) echo "run.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
	esac
done
[ ${#SPECS[@]} -gt 0 ] || [ ${#KERNELS[@]} -gt 0 ] || SPECS=("${DEFAULT_SPECS[@]}")

[ "$(id -u)" -eq 0 ] || die "must run as root (apt-get, mknod)"
mkdir -p "$CACHE/debs" "$OUT"

# ---------------------------------------------------------------- kernels
for s in "${SPECS[@]}"; do
	IFS=: read -r suite arch pkg <<<"$s"
	[ -n "$pkg" ] || die "--only $s: not SUITE:ARCH:PACKAGE"
	case $pkg in
	linux-image-[0-9]*) ;;                             # a versioned image
	*) pkg=$(resolve_meta "$suite" "$arch" "$pkg") ;; # a metapackage
	esac
	KERNELS+=("$arch:$(fetch_kernel "$suite" "$arch" "$pkg")")
done
ARCHES=$(printf '%s\n' "${KERNELS[@]}" | cut -d: -f1 | sort -u)

# ---------------------------------------------------------------- packages
install_host_tools
for a in $ARCHES; do
	[ "$a" = amd64 ] && continue
	command -v qemu-system-aarch64 >/dev/null || apt_install qemu-system-arm
	# the cross toolchain and the target's -dev libraries, for make ARCH=
	"$ROOT/tools/deps.sh" --cross "$a" >&2 || die "tools/deps.sh --cross $a failed"
done

# ---------------------------------------------------------------- build
# bin_dir ARCH: where make puts that architecture's latwhy and lab tools
bin_dir() { if [ "$1" = amd64 ]; then echo "$ROOT"; else echo "$ROOT/build/$1"; fi; }
LAB=(lat_server lat_client lw_hog)
if [ "$BUILD" -eq 1 ]; then
	for a in $ARCHES; do
		if [ "$a" = amd64 ]; then
			mk=() b=build
		else
			mk=(ARCH="$a") b=build/$a
		fi
		targets=("${LAB[@]/#/$b/tools/}")
		[ "$a" = amd64 ] && targets+=(latwhy) || targets+=("$b/latwhy")
		if ! make -s -C "$ROOT" "${mk[@]}" "${targets[@]}" >&2; then
			[ -s /tmp/mine ] || die "make ${mk[*]} failed"
			log "plain make failed; retrying with USER_SRCS from /tmp/mine"
			make -s -C "$ROOT" "${mk[@]}" "${targets[@]}" USER_SRCS="$(cat /tmp/mine)" >&2 ||
				die "make ${mk[*]} failed"
		fi
	done
fi
# tools_dir ARCH: where its lab tools are
tools_dir() { if [ "$1" = amd64 ]; then echo "$ROOT/build/tools"; else echo "$ROOT/build/$1/tools"; fi; }
for a in $ARCHES; do
	for b in "$(bin_dir "$a")/latwhy" "${LAB[@]/#/$(tools_dir "$a")/}"; do
		[ -x "$b" ] || die "$b is missing (build it, or drop --no-build)"
	done
done

# ---------------------------------------------------------------- initramfs
STAGE=$(mktemp -d /tmp/latwhy-initramfs.XXXXXX)
trap 'rm -rf "$STAGE"' EXIT

# needed_libs BIN: the shared libraries BIN loads, recursively, with its
# interpreter; from the ELF headers (ldd cannot run another architecture's
# binary). Looked up where Debian's multiarch packages put them.
needed_libs() {
	local todo=("$1") seen=" " f lib d p triplet
	triplet=$(file -L "$1" | grep -q aarch64 && echo aarch64-linux-gnu || echo x86_64-linux-gnu)
	readelf -l "$1" | sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p'
	while [ ${#todo[@]} -gt 0 ]; do
		f=${todo[0]}
		todo=("${todo[@]:1}")
		for lib in $(readelf -d "$f" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'); do
			case $seen in *" $lib "*) continue ;; esac
			seen+="$lib "
			p=""
			for d in "/lib/$triplet" "/usr/lib/$triplet"; do
				if [ -e "$d/$lib" ]; then p=$d/$lib; break; fi
			done
			[ -n "$p" ] || die "$1 needs $lib, not in /lib/$triplet or /usr/lib/$triplet"
			echo "$p"
			todo+=("$p")
		done
	done
}

copy_with_libs() {
	local bin=$1 dest=$2 lib
	install -D -m 0755 "$bin" "$STAGE$dest"
	while read -r lib; do
		[ -e "$STAGE$lib" ] || install -D -m 0755 "$(realpath "$lib")" "$STAGE$lib"
	done < <(needed_libs "$bin")
}

# busybox_for ARCH: a static busybox of that architecture (the host's for
# amd64, Debian's busybox-static .deb of bookworm otherwise)
busybox_for() {
	local a=$1 deb tmp
	if [ "$a" = amd64 ]; then echo /bin/busybox; return; fi
	if ! [ -x "$CACHE/busybox-$a" ]; then
		deb=$(kernel_deb bookworm "$a" busybox-static)
		tmp=$(mktemp -d "$CACHE/x.XXXXXX")
		dpkg-deb -x "$deb" "$tmp"
		install -m 0755 "$tmp/bin/busybox" "$CACHE/busybox-$a"
		rm -rf "$tmp"
	fi
	echo "$CACHE/busybox-$a"
}

# make_initrd ARCH: $OUT/initramfs-ARCH.cpio.gz with that architecture's
# latwhy, lab tools and busybox, /init the guest's script (run-init.sh)
make_initrd() {
	local a=$1 d tools
	d=$(bin_dir "$a")
	tools=$(tools_dir "$a")
	rm -rf "$STAGE"
	mkdir -p "$STAGE"/{bin,sbin,dev,proc,sys,tmp,etc,root,usr/bin}
	install -m 0755 "$(busybox_for "$a")" "$STAGE/bin/busybox"
	copy_with_libs "$d/latwhy" /usr/bin/latwhy
	for t in "${LAB[@]}"; do copy_with_libs "$tools/$t" "/usr/bin/$t"; done
	mknod -m 0600 "$STAGE/dev/console" c 5 1
	mknod -m 0666 "$STAGE/dev/null" c 1 3
	echo 'root:x:0:0:root:/root:/bin/sh' >"$STAGE/etc/passwd"
	install -m 0755 "$HERE/run-init.sh" "$STAGE/init"
	(cd "$STAGE" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 >"$OUT/initramfs-$a.cpio.gz"
}
for a in $ARCHES; do make_initrd "$a"; done

# ---------------------------------------------------------------- boot
choose_accel

# section NAME LOG: the lines between "=== LATWHY NAME BEGIN ===" and END
# (markers may follow escape sequences the firmware left on the line)
section() {
	awk -v b="=== LATWHY $1 BEGIN ===" -v e="=== LATWHY $1 END ===" \
		'index($0, e) {f = 0} f {print} index($0, b) {f = 1}' "$2"
}
# exit_of NAME LOG: the exit code a mode's EXIT marker gives
exit_of() { sed -n "s/.*=== LATWHY $1 EXIT \([0-9]*\) .*/\1/p" "$2" | head -n1; }
# why NAME LOG: the last line of a mode's stderr that says what went wrong
why() {
	section "$1" "$2" | grep -iE 'error|fail|invalid|denied|not supported|cannot|no |refus' |
		tail -n1 | cut -c1-200
}

# judge LOG: sets REASON to what failed ("" when all three modes passed)
# and REQS to the trace's request count
judge() {
	local logf=$1
	REASON=$(judge_why "$logf" || true)
	# the requests the trace counted, slow or not (its summary's)
	REQS=$(section TRACE "$logf" | grep '"type":"summary"' | grep -o '"requests":[0-9]*' |
		head -n1 | cut -d: -f2 || true)
}

# judge_why LOG: what failed, echoed; nothing when all passed
judge_why() {
	local logf=$1 json rc sums metrics slow reqs
	# without BTF: refused, in one line that says so
	rc=$(exit_of NOBTF "$logf")
	json=$(section NOBTF "$logf")
	if [ "${rc:-0}" = 0 ] || [ "$(grep -c . <<<"$json")" -ne 1 ] || ! grep -q 'no BTF' <<<"$json"; then
		echo "without BTF (exit ${rc:-?}) not one line naming it: $(head -c 200 <<<"$json" | tr '\n' '|')"
		return
	fi
	json=$(section TRACE "$logf")
	reqs=$(grep -c '"type":"request"' <<<"$json" || true)
	sums=$(grep '"type":"summary"' <<<"$json" || true)
	rc=$(exit_of TRACE "$logf")
	[ -n "$rc" ] || { echo "no trace exit marker (guest died mid-run?)"; return; }
	[ "$rc" = 0 ] || { echo "trace exited $rc: $(why 'TRACE STDERR' "$logf")"; return; }
	[ "$reqs" -ge 1 ] || { echo "trace: no \"type\":\"request\" line"; return; }
	[ "$(grep -c . <<<"$sums")" -eq 1 ] || { echo "trace: not one \"type\":\"summary\" line"; return; }
	grep -q '"dominant":"sched"' <<<"$sums" ||
		{ echo "trace: the injected cause is not named: $(grep -o '"dominant":"[a-z]*"' <<<"$sums")"; return; }

	rc=$(exit_of RECORD "$logf")
	[ "$rc" = 0 ] || { echo "record exited ${rc:-?}: $(why RECORD "$logf")"; return; }
	rc=$(exit_of REPORT "$logf")
	[ "$rc" = 0 ] || { echo "report exited ${rc:-?}: $(why 'REPORT STDERR' "$logf")"; return; }
	json=$(section REPORT "$logf")
	grep -q '"type":"request"' <<<"$json" || { echo "report: no request line"; return; }
	grep '"type":"summary"' <<<"$json" | grep -q '"dominant":"sched"' ||
		{ echo "report: the injected cause is not named: $(grep -o '"dominant":"[a-z]*"' <<<"$json")"; return; }

	rc=$(exit_of SERVE "$logf")
	[ -n "$rc" ] || { echo "no serve exit marker"; return; }
	metrics=$(section METRICS "$logf")
	[ -n "$metrics" ] || { echo "serve: the scrape got nothing (serve exit $rc): $(why SERVE "$logf")"; return; }
	[ "$rc" = 0 ] || { echo "serve exited $rc: $(why SERVE "$logf")"; return; }
	slow=$(awk '/^latwhy_slow_requests_total\{/ {n += $NF} END {print n + 0}' <<<"$metrics")
	[ "$slow" -gt 0 ] || { echo "serve: latwhy_slow_requests_total is 0 in the scrape"; return; }
	# the always-attached tier where the socket layer delimits requests,
	# else the duty cycle alone, said on stderr
	if grep -q '^latwhy_tier_active{tier="watch"} 1$' <<<"$metrics"; then
		TIER="watch tier"
	elif section SERVE "$logf" | grep -q 'no always-attached tier'; then
		TIER="duty cycle only"
	else
		echo "serve: neither the always-attached tier nor word of its absence"
		return
	fi
}

fails=0
for ka in "${KERNELS[@]}"; do
	a=${ka%%:*}
	k=${ka#*:}
	if ! [ -f "$k" ]; then
		echo "FAIL $k: no such kernel image"; fails=$((fails + 1)); continue
	fi
	name=$(kernel_name "$k")
	logf=$OUT/$name.log
	if [ "$a" = amd64 ]; then
		qemu=(qemu-system-x86_64 "${accel_args[@]}")
		console=ttyS0
		tag=""
		to=${TIMEOUT:-600}
	else
		# TCG always (another architecture), a thread per vCPU: no
		# text_poke_bp() on arm64 (see choose_accel)
		qemu=(qemu-system-aarch64 -M virt -cpu cortex-a72 -accel tcg)
		console=ttyAMA0
		tag=" ($a)"
		to=${TIMEOUT:-600}
	fi
	log "booting $name$tag (timeout ${to}s) -> ${logf#"$ROOT"/}"
	start=$(date +%s.%N)
	qrc=0
	timeout -k 10 "$to" "${qemu[@]}" \
		-m 2048 -smp 2 -nographic -no-reboot \
		-kernel "$k" -initrd "$OUT/initramfs-$a.cpio.gz" \
		-append "console=$console $APPEND$EXTRA_APPEND" \
		</dev/null 2>&1 | tr -d '\r' >"$logf" || qrc=${PIPESTATUS[0]}
	secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.0f", e - s}')
	log "$name$tag: qemu exited $qrc after ${secs}s; log ${logf#"$ROOT"/}"

	guest=$(sed -n 's/.*=== LATWHY GUEST uname=\([^ ]*\) .*/\1/p' "$logf" | head -n1)
	label=${guest:-$name}$tag
	REASON=""
	REQS=0
	TIER=""
	if [ "$qrc" -eq 124 ] || [ "$qrc" -eq 137 ]; then
		REASON="timed out after ${to}s"
	elif [ -z "$guest" ]; then
		REASON="guest never reached /init (qemu exit $qrc)"
	else
		judge "$logf"
	fi
	if [ -z "$REASON" ]; then
		echo "PASS $label: trace $REQS requests, report ok, serve ok ($TIER)"
	else
		echo "FAIL $label: $REASON"
		fails=$((fails + 1))
	fi
done

[ "$fails" -eq 0 ]
