# shellcheck shell=bash
# 55-nic.sh - nic: latwhy check's NIC facts against the kernel's
# Sourced by run.sh, which runs each test_NAME function below in the order
# they are defined (see run.sh); the helpers come from lib.sh.
# shellcheck source=tests/integration/lib.sh
declare -F start_server >/dev/null || . tests/integration/lib.sh

# latwhy check's NIC facts against what the kernel reports: this VM's own
# NICs and a veth pair made in a network namespace (veth answers the
# channel query: its maximum is the pair's queue count, as `ip -d link`
# prints it). No BPF: check reads sysfs, procfs and the ethtool ioctls.
test_nic() {
	local ns=lwtest-nic-$$ host=lwnic$$ msg
	command -v ip >/dev/null || { skip nic "no ip command (iproute2)"; return; }
	if ! ip netns add "$ns" 2>"$OUT/ip.err"; then
		skip nic "cannot create a network namespace: $(tail -1 "$OUT/ip.err")"
		return
	fi
	NETNS=$ns
	if ! { ip link add "$host" numrxqueues 4 numtxqueues 4 type veth peer name eth0 netns "$ns" &&
		ip link set "$host" up && ip -n "$ns" link set eth0 up; } 2>"$OUT/ip.err"; then
		fail nic "veth pair: $(tail -1 "$OUT/ip.err")"
		cleanup
		return
	fi
	# the pair goes with the namespace: nothing to restore
	cpu_mask 1 >"/sys/class/net/$host/queues/rx-0/rps_cpus"
	ip -d -j link show "$host" >"$OUT/ip.json" 2>"$OUT/ip.err"
	./latwhy check --sample 0 --json >"$OUT/check.json" 2>"$OUT/check.err"
	./latwhy check --sample 0 >"$OUT/check.txt" 2>>"$OUT/check.err"
	if msg=$(pycheck "$OUT" "$host" 2>&1 <<'EOF'
import glob, json, os, sys
out, host = sys.argv[1], sys.argv[2]
net = json.load(open(out + '/check.json'))['node']['network']
devs = {d['name']: d for d in net['devices']}
text = open(out + '/check.txt').read()
assert 'network devices' in text, 'no network devices section'

def sysfs(dev, f):
    try:
        return open('/sys/class/net/%s/%s' % (dev, f)).read().strip()
    except OSError:
        return None

def cpulist(mask):
    v = int(mask.replace(',', ''), 16)
    cpus = [c for c in range(v.bit_length()) if v >> c & 1]
    runs, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        runs.append(str(cpus[i]) if i == j else '%d-%d' % (cpus[i], cpus[j]))
        i = j + 1
    return ','.join(runs)

irqname = {}
for l in open('/proc/interrupts'):
    f = l.split(':', 1)
    if f[0].strip().isdigit():
        irqname[int(f[0])] = l.split()[-1]

for name in sorted(os.listdir('/sys/class/net')):
    if name == 'lo' or sysfs(name, 'type') == '772':
        assert name not in devs, 'lo listed'
        continue
    assert name in devs, '%s missing: %s' % (name, sorted(devs))
    d = devs[name]
    link = '/sys/class/net/%s/device/driver' % name
    if os.path.exists(link):
        drv = os.path.basename(os.path.realpath(link))
        assert d['driver'] == drv, '%s driver %s, sysfs %s' % (name, d['driver'], drv)
        assert d['kind'] == ('virtio-net' if drv == 'virtio_net' else 'physical'), d['kind']
    rxq = len(glob.glob('/sys/class/net/%s/queues/rx-*' % name))
    txq = len(glob.glob('/sys/class/net/%s/queues/tx-*' % name))
    assert len(d['rx_queues']) == rxq and len(d['tx_queues']) == txq, \
        '%s queues %d/%d, sysfs %d/%d' % (name, len(d['rx_queues']), len(d['tx_queues']), rxq, txq)
    if d['channels']:
        ch = d['channels']
        assert ch['combined'] + ch['rx'] == rxq, '%s channels %s, %d rx queues' % (name, ch, rxq)
    for q in d['rx_queues']:
        m = sysfs(name, 'queues/rx-%d/rps_cpus' % q['queue'])
        assert q['rps_cpus'] == (cpulist(m) if m else None), \
            '%s rx-%d rps %s, sysfs %s' % (name, q['queue'], q['rps_cpus'], m)
        fc = sysfs(name, 'queues/rx-%d/rps_flow_cnt' % q['queue'])
        assert q['rps_flow_cnt'] == (int(fc) if fc else None), '%s rx-%d flows' % (name, q['queue'])
        if q['irq'] is not None:
            aff = open('/proc/irq/%d/smp_affinity_list' % q['irq']).read().strip()
            assert q['affinity'] == aff, \
                '%s rx-%d IRQ %d affinity %s, /proc %s' % (name, q['queue'], q['irq'], q['affinity'], aff)
    sp = sysfs(name, 'speed')
    if sp and sp.lstrip('-').isdigit() and int(sp) > 0:
        assert d['speed_mbps'] == int(sp), '%s speed %s, sysfs %s' % (name, d['speed_mbps'], sp)
    if d['kind'] == 'virtio-net':
        q = d['rx_queues'][0]
        assert q['irq'] is not None and irqname[q['irq']].endswith('-input.0'), \
            'virtio rx-0 IRQ %s' % q['irq']
        assert "a guest's NIC" in d['note'], d['note']

v = devs[host]
link = json.load(open(out + '/ip.json'))[0]
assert v['kind'] == 'veth' and v['driver'] == 'veth', v
ch = v['channels']
assert ch['max_rx'] == link['num_rx_queues'], 'veth max rx %d, ip -d link %d' % (ch['max_rx'], link['num_rx_queues'])
assert ch['max_tx'] == link['num_tx_queues'], 'veth max tx %d, ip -d link %d' % (ch['max_tx'], link['num_tx_queues'])
assert v['rx_queues'][0]['rps_cpus'] == '1', 'veth rx-0 RPS %s' % v['rx_queues'][0]['rps_cpus']
assert v['rss'] is None and v['rings'] is None, 'veth answers rss or rings: %s %s' % (v['rss'], v['rings'])
assert '%s: veth, driver veth' % host in text, 'text has no %s line' % host
print('%d devices checked' % len(devs))
EOF
	); then
		echo "  $msg"
		pass nic
	else
		fail nic "$(echo "$msg" | tail -1)"
	fi
	cleanup
}
