#!/bin/sh
# The folder rules of user/ (user/README.md), checked on every build.
#
#   tools/layout.sh 'RULES' FILE...
#
# RULES is "folder:allowed,allowed ..." ('*' for any folder): a file in
# user/FOLDER/ may include "X/..." only for X in its allowed set, and only
# user/source/ may include libbpf (<bpf/...>, the skeleton). One line per
# include that breaks a rule, then exit 1.
set -u
rules=$1
shift
bad=0
for f in "$@"; do
	dir=${f#user/}
	dir=${dir%%/*}
	allowed=
	for r in $rules; do
		[ "${r%%:*}" = "$dir" ] && allowed=${r#*:}
	done
	if [ -z "$allowed" ]; then
		echo "layout: $f: user/$dir/ has no rule in the Makefile's LAYOUT"
		bad=1
		continue
	fi
	# "folder/header.h" includes, and libbpf's
	incs=$(sed -n -e 's/^#include "\([a-z_]*\)\/.*/\1/p' -e 's/^#include <\(bpf\)\/.*/<\1>/p' \
		-e 's/^#include "\(latwhy\.skel\.h\)".*/<bpf>/p' "$f" | sort -u)
	for inc in $incs; do
		if [ "$inc" = "<bpf>" ]; then
			[ "$dir" = source ] && continue
			echo "layout: $f includes libbpf: only user/source/ may"
			bad=1
			continue
		fi
		[ "$allowed" = "*" ] && continue
		case ",$allowed," in
		*",$inc,"*) ;;
		*)
			echo "layout: $f includes $inc/: user/$dir/ may include only $allowed"
			bad=1
			;;
		esac
	done
done
exit $bad
