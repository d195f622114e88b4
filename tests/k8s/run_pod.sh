#!/bin/bash
# run_pod.sh: the DaemonSet's container as a runtime would start it, without
# one. Run by tests/integration/85-k8s.sh as root, inside
# `unshare --cgroup --mount --fork` from the cgroup laid out as the pod's
# container (so that its cgroup namespace is rooted there, as a pod's is):
#
#   run_pod.sh ROOTFS PORT    (the DaemonSet's fields from pod_spec.py, in
#                              the environment: K8S_ARGS, K8S_MOUNTS, ...)
#
# The image's filesystem as the root, read only (readOnlyRootFilesystem);
# each hostPath bind-mounted at its mountPath, read only where the manifest
# says (and its submounts too where it asks recursiveReadOnly); the
# emptyDir a tmpfs; /proc a fresh procfs of the node's PID namespace
# (hostPID: no PID namespace of its own) with runc's read-only paths; /dev
# runc's few devices. Then, in the root, the image's ENTRYPOINT with the
# container's args as uid K8S_UID with the bounding set of the added
# capabilities alone (drop ALL), none inheritable or ambient, and
# no_new_privs (allowPrivilegeEscalation: false): as runc execs it.
set -euo pipefail
R=$1
PORT=$2
die() { echo "run_pod.sh: $*" >&2; exit 1; }
[ "$K8S_HOSTPID" = 1 ] || die "the DaemonSet has no hostPID: a PID namespace would be needed"
[ "$K8S_DROP" = ALL ] || die "capabilities.drop is not ALL: the runtime's default set is not modelled"
mount --make-rprivate /
mount --bind "$R" "$R"
while read -r kind a b c d; do
	case $kind in
	hostpath) # HOST PATH ro|rw recursive|top
		mkdir -p "$R$b" 2>/dev/null || true
		mount --rbind "$a" "$R$b"
		if [ "$c" = ro ]; then
			if [ "$d" = recursive ]; then
				# deepest first; each submount's own flag
				findmnt -R -n -l -o TARGET "$R$b" | sort -r | while read -r m; do
					mount -o remount,bind,ro "$m"
				done
			else
				mount -o remount,bind,ro "$R$b"
			fi
		fi
		;;
	emptydir) # PATH rw SIZE
		mkdir -p "$R$a" 2>/dev/null || true
		mount -t tmpfs -o "size=${c/Mi/m},mode=0755" emptydir "$R$a"
		;;
	esac
done <<<"$K8S_MOUNTS"
mount -t proc proc "$R/proc"
for p in bus fs irq sys sysrq-trigger; do
	[ -e "$R/proc/$p" ] && mount --bind "$R/proc/$p" "$R/proc/$p" && mount -o remount,bind,ro "$R/proc/$p"
done
mount -t tmpfs -o mode=0755,size=64k dev "$R/dev"
for d in null zero full random urandom tty; do
	touch "$R/dev/$d" && mount --bind "/dev/$d" "$R/dev/$d"
done
[ "$K8S_RO_ROOT" = 1 ] && mount -o remount,bind,ro "$R"
mapfile -t args <<<"${K8S_ARGS//PORT/$PORT}"
ep=$(sed -n 's/^ENTRYPOINT //p' "$R/.image-cmd" | python3 -c 'import json, sys; print(*json.load(sys.stdin))')
nnp=()
[ "$K8S_NNP" = 1 ] && nnp=(--no-new-privs)
# setpriv from the image (util-linux is Essential): chroot needs the
# capability the container will not have, so it comes first
exec chroot "$R" /usr/bin/setpriv --reuid="$K8S_UID" --regid="$K8S_UID" --clear-groups \
	--inh-caps=-all --ambient-caps=-all --bounding-set=-all,"$K8S_CAPS" "${nnp[@]}" \
	-- "$ep" "${args[@]}"
