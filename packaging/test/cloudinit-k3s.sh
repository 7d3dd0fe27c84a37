#!/usr/bin/env bash
# The k3s cloud-init example (packaging/cloud-init/k3s/): cloud-init's own
# schema check, and on a fixture root laid out as its first boot leaves it
# (the config files it writes, k3s-agent.service as k3s's install.sh writes
# it, a Synology kernel without nf_tables) the real binary's generator
# writes the k3s drop-in with IPTABLES_MODE=legacy and apply writes k3s's
# config.yaml.d with prefer-bundled-bin.
# Needs: cloud-init, python3 with PyYAML (cloud-init's dependency), go.
source "$(dirname "$0")/lib/common.sh"
need_tools cloud-init python3

ex=$REPO/packaging/cloud-init/k3s/agent-legacy-nas.yaml
work=$(mktemp -d /tmp/rke2pb-cloudinit-k3s.XXXXXX)
trap 'rm -rf "$work"' EXIT
cloud-init schema --config-file "$ex" >"$work/schema.out" 2>&1 || {
	cat "$work/schema.out" >&2
	fail "cloud-init schema rejects $ex"
}
head -n 1 "$ex" | grep -qx '#cloud-config' || fail "first line must be #cloud-config"
pass "$(basename "$ex"): $(cat "$work/schema.out")"

bin=$work/rke2-proxy-backend
(cd "$REPO" && CGO_ENABLED=0 go build -o "$bin" ./cmd/rke2-proxy-backend) || fail "go build failed"
root=$work/root
python3 - "$ex" "$root" <<'PY'
import os, sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
for f in doc["write_files"]:
    if f["path"].startswith(("/etc/rke2-proxy-backend/", "/etc/rancher/k3s/")):
        p = sys.argv[2] + f["path"]
        os.makedirs(os.path.dirname(p), exist_ok=True)
        open(p, "w").write(f["content"])
PY
# What install.sh leaves for an agent, and a NAS kernel (4.4, no nf_tables).
mkdir -p "$root/etc/systemd/system" "$root/usr/local/bin" "$root/proc/sys/kernel" "$root/boot" "$root/sbin"
cp "$REPO/internal/testkit/testhost/units/k3s.service" "$root/etc/systemd/system/k3s-agent.service"
sed -i 's/^Type=notify/Type=exec/; s/^    server \\/    agent \\/; s/k3s.service.env/k3s-agent.service.env/' "$root/etc/systemd/system/k3s-agent.service"
echo "K3S_TOKEN_FILE=/etc/rancher/k3s/cluster-token" >"$root/etc/systemd/system/k3s-agent.service.env"
printf '#!/bin/sh\n[ "$1" = --version ] && echo "k3s version v1.31.2+k3s1 (6da20424)"\n' >"$root/usr/local/bin/k3s"
printf '#!/bin/sh\nexit 0\n' >"$root/sbin/modprobe"
chmod 755 "$root/usr/local/bin/k3s" "$root/sbin/modprobe"
echo 4.4.302+ >"$root/proc/sys/kernel/osrelease"
printf 'CONFIG_IP_NF_IPTABLES=y\nCONFIG_IP_NF_FILTER=y\nCONFIG_IP_NF_NAT=y\nCONFIG_IP_NF_MANGLE=y\n# CONFIG_NF_TABLES is not set\n' >"$root/boot/config-4.4.302+"
cp "$root/etc/systemd/system/k3s-agent.service.env" "$work/env.orig"

gen=$work/gen
mkdir -p "$gen"
RKE2_PROXY_BACKEND_ROOT=$root SYSTEMD_IN_INITRD= "$bin" generate "$gen" 2>"$work/gen.log" || fail "generator exited non-zero"
dropin=$gen/k3s-agent.service.d/50-rke2-proxy-backend.conf
[ -f "$dropin" ] || { cat "$work/gen.log" >&2; fail "no drop-in for k3s-agent.service"; }
assert_contains "$dropin" "Environment=IPTABLES_MODE=legacy" "k3s-agent drop-in"
assert_contains "$dropin" "apply --backend=iptables-legacy" "k3s-agent drop-in"
cmp -s "$root/etc/systemd/system/k3s-agent.service.env" "$work/env.orig" || fail "the generator changed k3s-agent.service.env"
pass "generator: k3s-agent.service gets IPTABLES_MODE=legacy and apply, its .env untouched"

"$bin" --root "$root" apply --backend=iptables-legacy 2>"$work/apply.log" || { cat "$work/apply.log" >&2; fail "apply failed"; }
k3s=$root/etc/rancher/k3s/config.yaml.d/60-proxy-backend.yaml
assert_contains "$k3s" "prefer-bundled-bin: true" "k3s drop-in"
assert_contains "$k3s" '"proxy-mode=iptables"' "k3s drop-in"
if grep -q kube-proxy-extra-env "$k3s"; then fail "the k3s drop-in has kube-proxy-extra-env, which k3s does not know"; fi
pass "apply: $k3s has k3s's keys and prefer-bundled-bin"
