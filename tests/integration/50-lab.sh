# shellcheck shell=bash
# 50-lab.sh - lab: the lab's own journal, restored after a SIGKILL
# Sourced by run.sh, which runs each test_NAME function below in the order
# they are defined (see run.sh); the helpers come from lib.sh.
# shellcheck source=tests/integration/lib.sh
declare -F start_server >/dev/null || . tests/integration/lib.sh

# A lab run killed by SIGKILL leaves what it changed (its EXIT trap never
# runs); the next script that sources lab.sh as root restores it from the
# dead run's journal, and leaves a live run's alone.
test_lab_recover() {
	local dir=$OUT/journal knob=/proc/sys/vm/stat_interval old s1 s2 dead live err all before after
	old=$(cat "$knob")
	all=$(cpu_list $$)
	sleep 60 &
	s1=$!
	sleep 60 &
	s2=$!
	PIDS+=("$s1" "$s2")
	mkfifo "$OUT/never"
	LAB_JOURNAL_DIR=$dir bash -c "LAB_PROG=live; . tools/lab.sh; trap restore_affinity EXIT
		set_affinity 0 $s2; echo moved; read -r -t 30 <>\"$OUT/never\"" >"$OUT/live.out" 2>&1 &
	live=$!
	PIDS+=("$live")
	wait_for "$OUT/live.out" moved "$live" 5
	dead=$(LAB_JOURNAL_DIR=$dir bash -c "LAB_PROG=dead; . tools/lab.sh; echo \$\$;
		set_knob $knob 7; set_affinity 0 $s1; kill -KILL \$\$" 2>/dev/null)
	before="$(cat "$knob") $(cpu_list "$s1") $(find "$dir" -type f | wc -l)"
	err=$(LAB_JOURNAL_DIR=$dir bash -c 'LAB_PROG=next; . tools/lab.sh' 2>&1)
	after="$(cat "$knob") $(cpu_list "$s1") $(cpu_list "$s2")"
	kill -TERM "$live" 2>/dev/null
	reap "$live"
	echo "$old" >"$knob" # whatever happened above
	if [ "$before" != "7 0 2" ]; then
		fail lab_recover "the dead run did not leave its changes and a journal: $before"
	elif [ "$err" != "next: restored 2 of 2 settings left by lab run $dead, which died before it could" ]; then
		fail lab_recover "recovery said: $err"
	elif [ "$after" != "$old $all 0" ]; then
		fail lab_recover "after recovery (knob, dead run's task, live run's task): $after, not $old $all 0"
	elif [ -n "$(find "$dir" -type f)" ]; then
		fail lab_recover "journals left: $(find "$dir" -type f)"
	else
		pass lab_recover
	fi
	cleanup
}
