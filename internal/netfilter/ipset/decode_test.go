package ipset

import (
	"reflect"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nlsock"
)

func TestDecodeRejectsPartialSets(t *testing.T) {
	for name, msg := range map[string][]byte{
		"short":       {2},
		"no name":     nlsock.AppendAttr(nfgen(), attrTypename, []byte("hash:ip\x00")),
		"cut attr":    Encode(Set{Name: "KUBE-CLUSTER-IP", Type: "hash:ip,port"})[:9],
		"no type":     nlsock.AppendAttr(nfgen(), attrSetname, []byte("KUBE-LOOP-BACK\x00")),
		"bad counter": nlsock.AppendAttr(nlsock.AppendAttr(nlsock.AppendAttr(nfgen(), attrSetname, []byte("A\x00")), attrTypename, []byte("hash:ip\x00")), attrData, nlsock.AppendAttr(nil, attrReferences, []byte{1, 2})),
	} {
		if s, err := Decode(msg); err == nil {
			t.Errorf("%s: Decode = %+v, want an error", name, s)
		}
	}
}

// Property: whatever the kernel could send for a set decodes back to that
// set; any other bytes decode to an error or to a set with a name and a
// type, never a panic.
func FuzzDecode(f *testing.F) {
	f.Add("KUBE-CLUSTER-IP", "hash:ip,port", uint8(7), uint8(0), uint32(3), uint32(1), uint32(408), []byte{})
	f.Add("KUBE-NODE-PORT-TCP", "bitmap:port", uint8(3), uint8(2), uint32(0), uint32(0), uint32(8280), []byte{4, 0, 1, 0})
	f.Add("x", "list:set", uint8(3), uint8(1), uint32(1), uint32(0), uint32(0), Encode(Set{Name: "KUBE-6-LOOP-BACK", Type: "hash:ip,port,ip", Family: "inet6"}))
	f.Fuzz(func(t *testing.T, name, typ string, rev, fam uint8, entries, refs, mem uint32, raw []byte) {
		family := []string{"", "inet", "inet6"}[int(fam)%3]
		if name != "" && typ != "" && !hasNUL(name) && !hasNUL(typ) && len(name) < 32 && len(typ) < 32 {
			want := Set{Name: name, Type: typ, Revision: rev, Family: family, Entries: entries, References: refs, MemSize: mem}
			got, err := Decode(Encode(want))
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("Decode(Encode(%+v)) = %+v, %v", want, got, err)
			}
		}
		if s, err := Decode(raw); err == nil && (s.Name == "" || s.Type == "") {
			t.Fatalf("Decode(%x) = %+v without an error: a partial set", raw, s)
		}
	})
}

func hasNUL(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return true
		}
	}
	return false
}
