package switchjournal

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// config is an operator config as a journal records it.
const config = "# operator notes\nbackend: iptables-legacy # NAS kernel\nverify:\n  wait: 2m\n"

func TestJournalRefusesUnknownSchema(t *testing.T) {
	for _, in := range []string{`{"schema": 2, "from": "iptables-legacy"}`, `{"from": "iptables-legacy"}`} {
		_, err := Parse([]byte(in))
		if err == nil || !strings.Contains(err.Error(), "reads schema 1 only") || !strings.Contains(err.Error(), hostfs.SwitchJournal) {
			t.Errorf("%s: %v", in, err)
		}
	}
	for _, in := range []string{
		`{"schema": 1, "from": "iptables-legacy", "to": "iptables-nft", "phase": "switch", "step": "teleport", "config": {"path": "/x", "existed": false}}`,
		`{"schema": 1, "from": "modern", "to": "iptables-nft", "phase": "switch", "step": "restart", "config": {"path": "/x", "existed": false}}`,
	} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Errorf("accepted %s", in)
		}
	}
}

// Whatever ParseJournal accepts survives a write and a read unchanged:
// the rollback restores what was recorded, not an approximation.
func FuzzParse(f *testing.F) {
	j := Journal{Schema: 1, From: "iptables-legacy", To: "nftables", Phase: PhaseSwitch, Step: "restart",
		Config: Snapshot{Path: hostfs.ConfigFile, Existed: true, Data: []byte(config), Mode: 0o640, Link: "/srv/x"}, Owner: Owner{PID: 7, Boot: "b"}}
	dir := f.TempDir()
	fj := File{Root: hostfs.New(dir)}
	if err := fj.Write(&j); err != nil {
		f.Fatal(err)
	}
	seed, _ := os.ReadFile(fj.Root.Path(hostfs.SwitchJournal))
	f.Add(seed)
	f.Add([]byte(`{"schema": 1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		j, err := Parse(data)
		if err != nil {
			return
		}
		root := hostfs.New(t.TempDir())
		if err := (File{Root: root}).Write(j); err != nil {
			t.Fatal(err)
		}
		back, err := File{Root: root}.Read()
		if err != nil {
			t.Fatalf("a journal it accepted does not read back: %v", err)
		}
		if fmt.Sprintf("%+v", *back) != fmt.Sprintf("%+v", *j) {
			t.Fatalf("read back %+v, wrote %+v", *back, *j)
		}
	})
}
