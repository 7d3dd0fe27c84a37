package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"
)

// The yardstick must do the work it stands for, or the floor row flatters
// the goal: every kind of operation, a config read through the gunzip,
// and a durable write that lands where the generator's did.
func TestOperations(t *testing.T) {
	dir := t.TempDir()
	var gz bytes.Buffer
	z := gzip.NewWriter(&gz)
	z.Write([]byte("CONFIG_NF_TABLES=m\n" + netfilterEnd + "\nCONFIG_LAST=y\n"))
	z.Close()
	files := map[string][]byte{
		"config.gz":   gz.Bytes(),
		"config.yaml": []byte("kube-proxy-arg:\n  - proxy-mode=nftables\n"),
		"plain":       []byte("x\n"),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "n", "rke2-server.service.d", "50-rke2-proxy-backend.conf")
	if err := os.MkdirAll(filepath.Dir(filepath.Dir(out)), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{
		"stat:" + dir + "/missing", "link:" + dir + "/plain", "dir:" + dir,
		"read:" + dir + "/config.gz", "read:" + dir + "/config.yaml", "read:" + dir + "/missing",
		"write:" + out, "write:" + out, // over an earlier run's drop-in, as the generator writes
	} {
		if err := do(op); err != nil {
			t.Fatalf("%s: %v", op, err)
		}
	}
	got, err := os.ReadFile(out)
	if err != nil || !bytes.Equal(got, dropIn) {
		t.Fatalf("drop-in %q, %v; want %q", got, err, dropIn)
	}
	if err := do("read:" + dir + "/bad.gz"); err != nil {
		t.Fatalf("a missing file is replayed, not an error: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "bad.gz"), []byte("not gzip"), 0o644)
	os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("a: [\n"), 0o644)
	for _, op := range []string{"read:" + dir + "/bad.gz", "read:" + dir + "/bad.yaml", "nope:/x", "stat:relative"} {
		if err := do(op); err == nil {
			t.Errorf("%s: no error", op)
		}
	}
}
