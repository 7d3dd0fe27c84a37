#!/bin/sh
# Stand-in for RKE2's install.sh at the path airgap-server.yaml runs it
# from, doing what the real one does with INSTALL_RKE2_ARTIFACT_PATH and
# the tarball method: pick the architecture from uname -m, check
# rke2.linux-<arch>.tar.gz against sha256sum-<arch>.txt, copy the images
# archive to the agent images directory, unpack to /usr/local, reload
# systemd. It neither writes config nor enables the service (nor does RKE2's).
set -eu
: "${INSTALL_RKE2_ARTIFACT_PATH:?the example must set INSTALL_RKE2_ARTIFACT_PATH}"
[ "${INSTALL_RKE2_METHOD:-}" = tar ] || { echo "stand-in install.sh: expected INSTALL_RKE2_METHOD=tar" >&2; exit 1; }
[ "${INSTALL_RKE2_TYPE:-}" = server ] || { echo "stand-in install.sh: expected INSTALL_RKE2_TYPE=server" >&2; exit 1; }
case $(uname -m) in
x86_64 | amd64) arch=amd64 ;;
aarch64 | arm64) arch=arm64 ;;
*) echo "stand-in install.sh: unsupported architecture $(uname -m)" >&2; exit 1 ;;
esac
cd "$INSTALL_RKE2_ARTIFACT_PATH"
grep " rke2.linux-$arch.tar.gz\$" "sha256sum-$arch.txt" | sha256sum -c --status ||
	{ echo "stand-in install.sh: rke2.linux-$arch.tar.gz does not match sha256sum-$arch.txt" >&2; exit 1; }
mkdir -p /var/lib/rancher/rke2/agent/images
cp "rke2-images.linux-$arch.tar.zst" /var/lib/rancher/rke2/agent/images/
tar xzf "rke2.linux-$arch.tar.gz" -C /usr/local
systemctl daemon-reload
echo "stand-in install.sh: installed $(/usr/local/bin/rke2 --version 2>/dev/null | head -n 1) for $arch"
