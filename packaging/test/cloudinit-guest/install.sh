#!/bin/sh
# Stand-in for RKE2's install.sh, doing what the real one does with the
# tarball method: pick the architecture from uname -m, take
# rke2.linux-<arch>.tar.gz, rke2-images.linux-<arch>.tar.zst and
# sha256sum-<arch>.txt from INSTALL_RKE2_ARTIFACT_PATH (air-gapped) or
# download them for INSTALL_RKE2_VERSION from GitHub's release URL (served by
# the test inside the guest), check the sums, copy the images archive to the
# agent images directory, unpack to /usr/local (the binary and both units,
# rke2-server.service and rke2-agent.service), reload systemd. It neither
# writes config nor enables the service (nor does RKE2's).
set -eu
case ${INSTALL_RKE2_METHOD:-tar} in tar) ;; *) echo "stand-in install.sh: only the tarball method is played" >&2; exit 1 ;; esac
# RKE2's installer defaults to server (INSTALL_RKE2_EXEC is its older alias);
# its tarball carries rke2-server.service and rke2-agent.service, and both land
# in /usr/local/lib/systemd/system. The type picks the unit checked for below.
type=${INSTALL_RKE2_TYPE:-${INSTALL_RKE2_EXEC:-server}}
case $type in server | agent) ;; *) echo "stand-in install.sh: INSTALL_RKE2_TYPE=$type: RKE2 installs server or agent" >&2; exit 1 ;; esac
case $(uname -m) in
x86_64 | amd64) arch=amd64 ;;
aarch64 | arm64) arch=arm64 ;;
*) echo "stand-in install.sh: unsupported architecture $(uname -m)" >&2; exit 1 ;;
esac
files="rke2.linux-$arch.tar.gz rke2-images.linux-$arch.tar.zst sha256sum-$arch.txt"
if [ -n "${INSTALL_RKE2_ARTIFACT_PATH:-}" ]; then
	cd "$INSTALL_RKE2_ARTIFACT_PATH"
else
	: "${INSTALL_RKE2_VERSION:?stand-in install.sh: the example must pin INSTALL_RKE2_VERSION}"
	tmp=$(mktemp -d)
	cd "$tmp"
	for f in $files; do
		curl -sfL -o "$f" "https://github.com/rancher/rke2/releases/download/$INSTALL_RKE2_VERSION/$f" ||
			{ echo "stand-in install.sh: download of $INSTALL_RKE2_VERSION/$f failed" >&2; exit 1; }
	done
fi
for f in "rke2.linux-$arch.tar.gz" "rke2-images.linux-$arch.tar.zst"; do
	grep " $f\$" "sha256sum-$arch.txt" | sha256sum -c --status ||
		{ echo "stand-in install.sh: $f does not match sha256sum-$arch.txt" >&2; exit 1; }
done
mkdir -p /var/lib/rancher/rke2/agent/images
cp "rke2-images.linux-$arch.tar.zst" /var/lib/rancher/rke2/agent/images/
tar xzf "rke2.linux-$arch.tar.gz" -C /usr/local
test -f "/usr/local/lib/systemd/system/rke2-$type.service" ||
	{ echo "stand-in install.sh: rke2.linux-$arch.tar.gz has no lib/systemd/system/rke2-$type.service" >&2; exit 1; }
systemctl daemon-reload
echo "stand-in install.sh: installed $(/usr/local/bin/rke2 --version 2>/dev/null | head -n 1) for $arch (rke2-$type.service)"
