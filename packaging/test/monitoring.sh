#!/usr/bin/env bash
# The shipped monitoring files: Prometheus alert rules pass promtool's check
# and their unit tests, and both packages install the rules and the
# node-problem-detector config where docs/verify-and-watch.md says.
# Needs: promtool (Debian package prometheus), make, go, dpkg-deb, rpm.
source "$(dirname "$0")/lib/common.sh"
need_tools promtool dpkg-deb rpm make

cd "$REPO/packaging/monitoring/prometheus"
promtool check rules rke2-proxy-backend.rules.yaml | sed 's/^/    /'
promtool test rules rules_test.yaml | sed 's/^/    /'

ensure_packages
want=(
	/usr/share/rke2-proxy-backend/monitoring/node-problem-detector/rke2-proxy-backend.json
	/usr/share/rke2-proxy-backend/monitoring/prometheus/rke2-proxy-backend.rules.yaml
	/usr/share/rke2-proxy-backend/monitoring/prometheus/rke2-proxy-backend.prometheusrule.yaml
	/usr/share/rke2-proxy-backend/monitoring/grafana/rke2-proxy-backend-fleet.json
)
debfiles=$(dpkg-deb -c "$DEB_AMD64" | awk '{print $NF}' | sed 's|^\./|/|')
rpmfiles=$(rpm -qlp "$RPM_AMD64" 2>/dev/null)
for f in "${want[@]}"; do
	grep -qx "$f" <<<"$debfiles" || fail "$(basename "$DEB_AMD64") does not install $f"
	grep -qx "$f" <<<"$rpmfiles" || fail "$(basename "$RPM_AMD64") does not install $f"
done
pass "alert rules pass promtool check and test; both packages ship the monitoring files"
