"""Ordering and content rules for one cloud-init example (cloudinit.sh).

Usage: cloudinit_order.py EXAMPLE.yaml
Prints one line per rule that holds; exits 1 naming the first that does not.

cloud-init runs write_files (init stage), then apt/yum source modules
(config stage), then package_update and packages (final stage), then the
runcmd script (scripts_user, later in the final stage); runcmd's lines run
in order. So "before RKE2's first start" means: our config in a
non-deferred write_files entry, our package in `packages:` (with
package_update) or installed in runcmd after an apt-get update, both before
the RKE2 installer line, which comes before `systemctl enable --now`.
"""
import re
import sys

import yaml

path = sys.argv[1]
name = path.rsplit("/", 1)[-1]
text = open(path).read()
doc = yaml.safe_load(text)
el = name.startswith("el-")
airgap = name.startswith("airgap-")
role = "agent" if "agent" in name else "server"


def fail(msg):
    sys.exit(f"{name}: {msg}")


def ok(msg):
    print(f"ok: {name}: {msg}")


files = {f["path"]: f for f in doc.get("write_files", [])}
run = [" ".join(c) if isinstance(c, list) else c for c in doc.get("runcmd", [])]


def line_index(pattern, what):
    for i, c in enumerate(run):
        if re.search(pattern, c):
            return i
    fail(f"no runcmd line {what} (/{pattern}/)")


# Our config is written in the init stage, before any package or runcmd.
cfg = files.get("/etc/rke2-proxy-backend/config.yaml")
if cfg is None or cfg.get("defer"):
    fail("/etc/rke2-proxy-backend/config.yaml must be a non-deferred write_files entry (written before the package)")
ok("our config is written first (write_files, init stage)")

# RKE2: token from a file, version pinned, installer before enable --now.
rke2 = yaml.safe_load(files["/etc/rancher/rke2/config.yaml"]["content"])
if "token" in rke2:
    fail("RKE2's config has the token inline; use token-file")
tf = rke2.get("token-file")
if tf not in files or str(files[tf].get("permissions")) != "0600":
    fail(f"token-file {tf} must be written with permissions 0600")
ok(f"RKE2 reads its token from {tf} (0600)")
if role == "agent" and not str(rke2.get("server", "")).startswith("https://"):
    fail("the agent's RKE2 config needs server: https://...")

installer = line_index(r"install\.sh|get\.rke2\.io", "running RKE2's installer")
enable = line_index(rf"^systemctl enable --now rke2-{role}\.service$", f"enabling rke2-{role}")
if not installer < enable:
    fail("RKE2's installer must run before systemctl enable --now")
if not re.search(rf"INSTALL_RKE2_TYPE={role}\b", run[installer]):
    fail(f"the installer line does not set INSTALL_RKE2_TYPE={role}")
if airgap:
    if "INSTALL_RKE2_ARTIFACT_PATH=" not in run[installer]:
        fail("the air-gapped installer must use INSTALL_RKE2_ARTIFACT_PATH")
    if not re.search(r"releases/tag/v\d+\.\d+\.\d+%2Brke2r\d+", text):
        fail("the air-gapped example must name the pinned RKE2 release its artifacts come from")
    ok("RKE2 from local artifacts (INSTALL_RKE2_ARTIFACT_PATH) of a named release")
else:
    if not re.search(r"INSTALL_RKE2_VERSION=v\d+\.\d+\.\d+\+rke2r\d+ ", run[installer]):
        fail("RKE2's version is not pinned (INSTALL_RKE2_VERSION=vX.Y.Z+rke2rN)")
    pin = re.search(r"INSTALL_RKE2_VERSION=(\S+)", run[installer]).group(1)
    ok(f"RKE2 version pinned: {pin}")
ok(f"runcmd: RKE2's installer (line {installer + 1}) before enable --now (line {enable + 1})")

# Our package comes from the signed repository before RKE2's installer.
if doc.get("packages"):
    if "rke2-proxy-backend" not in doc["packages"] or doc.get("package_update") is not True:
        fail("packages: must list rke2-proxy-backend with package_update: true")
    ok("our package in packages: with package_update (final stage, before runcmd)")
else:
    upd = line_index(r"^apt-get update", "apt-get update")
    inst = line_index(r"apt-get install .*rke2-proxy-backend", "installing rke2-proxy-backend")
    if "--force-conf" in run[inst]:
        fail("apt-get install in runcmd passes a --force-conf* option: the package asks no conffile question (it keeps a config written first), so none is needed")
    if not upd < inst < installer:
        fail("runcmd must run apt-get update, then install rke2-proxy-backend, then RKE2's installer")
    ok(f"runcmd: apt-get update (line {upd + 1}), our package (line {inst + 1}), then RKE2's installer")

# The repository: trusted by one key, at the path the source names.
if el:
    repo = files.get("/etc/yum.repos.d/rke2-proxy-backend.repo")
    if repo is None:
        fail("no /etc/yum.repos.d/rke2-proxy-backend.repo")
    r = repo["content"]
    for want in ("gpgcheck=1", "repo_gpgcheck=1", "baseurl=REPO_URL/yum/$basearch"):
        if want not in r.splitlines():
            fail(f"the .repo file lacks {want}")
    key = re.search(r"^gpgkey=file://(\S+)$", r, re.M)
    if not key or key.group(1) not in files:
        fail("the .repo file's gpgkey= must be a file the example writes")
else:
    src = files.get("/etc/apt/sources.list.d/rke2-proxy-backend.list")
    if src is None:
        fail("no /etc/apt/sources.list.d/rke2-proxy-backend.list")
    key = re.search(r"^deb \[signed-by=(\S+)\] \S+ stable main$", src["content"].strip(), re.M)
    if not key or key.group(1) not in files:
        fail("the apt source needs signed-by= naming a key file the example writes")
keyfile = files[key.group(1)]["content"]
if "BEGIN PGP PUBLIC KEY BLOCK" not in keyfile:
    fail(f"{key.group(1)} is not an armored public key block")
ok(f"repository signed, trusted through {key.group(1)} only")

# The architecture is the node's: no fixed one outside comments.
body = yaml.safe_dump({k: doc[k] for k in ("write_files", "runcmd", "packages") if k in doc})
m = re.search(r"amd64|x86_64|arm64|aarch64", body)
if m:
    fail(f"hard-coded architecture {m.group(0)}: let apt, $basearch or install.sh pick it")
ok("no fixed architecture")

# EL: RKE2's documented host prerequisites, and nothing EL lacks.
if el:
    nm = files.get("/etc/NetworkManager/conf.d/rke2-canal.conf", {}).get("content", "")
    if "[keyfile]" not in nm or "interface-name:cali*" not in nm or "interface-name:flannel*" not in nm:
        fail("NetworkManager must be told to leave cali*/flannel* alone (conf.d/rke2-canal.conf, [keyfile] unmanaged-devices)")
    for u in ("firewalld.service", "nm-cloud-setup.service", "nm-cloud-setup.timer"):
        i = line_index(re.escape(u), f"disabling {u}")
        if "systemctl disable --now" not in run[i] or not i < installer:
            fail(f"{u} must be disabled before RKE2's installer")
    i = line_index(r"kernel-modules-extra", "installing kernel-modules-extra on EL 10")
    if not i < enable or "-ge 10" not in run[i]:
        fail("kernel-modules-extra must be installed on EL 10 before RKE2 starts")
    reload = line_index(r"reload NetworkManager", "reloading NetworkManager")
    if not reload < installer:
        fail("NetworkManager must be reloaded before RKE2's installer")
    if re.search(r"update-alternatives|sbin/ip6?tables-legacy", " ".join(run)):
        fail("EL 9 has no iptables-legacy (EPEL only): no update-alternatives")
    ok("EL: firewalld, nm-cloud-setup service and timer off, cali*/flannel* unmanaged, kernel-modules-extra on EL 10, no iptables-legacy")

# Every placeholder in the body is named in the header's replace list.
header = text.split("\n\n", 1)[0]
marks = set(re.findall(r"CHANGE-ME[\w.-]*|REPO_URL", body))
if "Replace this block" in body:
    marks.add("the PGP key block")
for mk in sorted(marks):
    if mk not in header:
        fail(f"placeholder {mk} is not named in the header's 'Replace before use' list")
ok(f"every placeholder is named in the header: {', '.join(sorted(marks))}")
