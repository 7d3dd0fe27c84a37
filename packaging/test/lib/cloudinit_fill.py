#!/usr/bin/env python3
"""cloudinit_fill.py EXAMPLE KEYFILE REPO_URL: prints a cloud-init example
of packaging/cloud-init filled in as an operator fills it in: its PGP key
block replaced by KEYFILE's armored key (at the block's indent), and the
placeholder REPO_URL in an apt source line ("] REPO_URL/apt ") by
REPO_URL. Exits non-zero naming what is missing when the example
has no key block. Used by cloudinit-boot.sh and the VM tier's cloud-init
case (vm/cases.sh)."""
import re
import sys

example, keyfile, repo_url = sys.argv[1:4]
text, key = open(example).read(), open(keyfile).read()
block = re.compile(r"^( +)-----BEGIN PGP PUBLIC KEY BLOCK-----\n.*?\n +-----END PGP PUBLIC KEY BLOCK-----\n", re.M | re.S)
m = block.search(text)
if not m:
    sys.exit(f"{example}: no PGP public key block to replace")
indent = m.group(1)
text = text[: m.start()] + "".join(indent + l if l.strip() else l for l in key.splitlines(True)) + text[m.end():]
text = re.sub(r"(?<=\] )REPO_URL(?=/apt )", repo_url, text)
sys.stdout.write(text)
