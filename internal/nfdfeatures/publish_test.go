package nfdfeatures

import (
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

func TestPublishOnlyWhereNFDLooks(t *testing.T) {
	now := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	h := testhost.New(t)
	if err := Publish(h.Root(), func() Features { t.Fatal("features asked for on a host without NFD"); return sample }, now, time.Hour); err != nil {
		t.Fatal(err)
	}
	if h.Root().Exists(hostfs.NFDFeaturesDir) {
		t.Fatal("Publish created NFD's directory on a host without NFD")
	}
	h.Mkdir(hostfs.NFDFeaturesDir)
	if err := Publish(h.Root(), func() Features { return sample }, now, time.Hour); err != nil {
		t.Fatal(err)
	}
	data, err := h.Root().ReadFile(hostfs.NFDFeatureFile)
	if err != nil {
		t.Fatal(err)
	}
	if got := nfdLabels(t, data, now.Add(59*time.Minute)); got[Namespace+"/"+Prefix+LabelBackend] != "iptables-nft" {
		t.Errorf("NFD reads %v", got)
	}
	entries, _ := h.Root().ReadDir(hostfs.NFDFeaturesDir)
	if len(entries) != 1 {
		t.Errorf("features.d holds %v; want only our file (no temporary left)", entries)
	}
}

// A run that cannot write its labels leaves none: NFD would otherwise
// keep the previous run's until they expire.
func TestPublishThatFailsRemovesThePrevious(t *testing.T) {
	now := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	h := testhost.New(t).Mkdir(hostfs.NFDFeaturesDir)
	if err := Publish(h.Root(), func() Features { return sample }, now, time.Hour); err != nil {
		t.Fatal(err)
	}
	err := Publish(h.Root(), func() Features { return Features{Backend: "not a value"} }, now, time.Hour)
	if err == nil || !strings.Contains(err.Error(), hostfs.NFDFeatureFile) {
		t.Fatalf("got %v; want the error naming the file", err)
	}
	if h.Root().Exists(hostfs.NFDFeatureFile) {
		t.Fatal("the previous labels are still there")
	}
	if err := Remove(h.Root()); err != nil {
		t.Errorf("Remove without a file: %v", err)
	}
}
