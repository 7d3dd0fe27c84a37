package backend

import (
	"slices"
	"strings"
	"testing"
)

// Every scheduler loads its own module after ip_vs, beside ip_set, the set
// types kube-proxy's ipvs proxier creates, xt_set, nf_conntrack and dummy.
func TestIPVSModulesPerScheduler(t *testing.T) {
	for _, sched := range append([]string{""}, IPVSSchedulers...) {
		mods, err := IPVSModules(sched)
		if err != nil {
			t.Fatalf("%q: %v", sched, err)
		}
		want := sched
		if want == "" {
			want = "rr"
		}
		if mods[0] != "ip_vs" || mods[1] != "ip_vs_"+want {
			t.Errorf("%q: %v, want ip_vs then ip_vs_%s", sched, mods, want)
		}
		for _, m := range []string{"ip_set", "ip_set_hash_ip", "ip_set_hash_ipport", "ip_set_hash_ipportip", "ip_set_hash_ipportnet", "ip_set_bitmap_port", "xt_set", "nf_conntrack", "dummy"} {
			if !slices.Contains(mods, m) {
				t.Errorf("%q: %v lacks %s", sched, mods, m)
			}
		}
	}
}

// A scheduler the kernel lacks is named with the list; nothing is built
// from its text (it would become a modprobe argument).
func TestIPVSModulesUnknownScheduler(t *testing.T) {
	mods, err := IPVSModules("--force rr")
	if err == nil || !strings.Contains(err.Error(), `"--force rr"`) || !strings.Contains(err.Error(), "wrr") {
		t.Fatalf("err = %v", err)
	}
	for _, m := range mods {
		if strings.Contains(m, "force") {
			t.Errorf("module %q built from the scheduler's text", m)
		}
	}
	if !slices.Contains(mods, "ip_vs") || !slices.Contains(mods, "xt_set") {
		t.Errorf("%v: the rest of the preload is gone", mods)
	}
}
