package nl

import (
	"encoding/binary"
	"testing"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

func objMessage(t testing.TB, fam byte, table, name string, typ uint32) []byte {
	b, err := netlink.MarshalAttributes([]netlink.Attribute{
		{Type: unix.NFTA_OBJ_TABLE, Data: append([]byte(table), 0)},
		{Type: unix.NFTA_OBJ_NAME, Data: append([]byte(name), 0)},
		{Type: unix.NFTA_OBJ_TYPE, Data: binary.BigEndian.AppendUint32(nil, typ)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte{fam, 0, 0, 0}, b...)
}

// FuzzDecodeObj: any message decodes without panicking, and what decodes
// written back as an object message decodes to the same object.
func FuzzDecodeObj(f *testing.F) {
	f.Add(objMessage(f, unix.NFPROTO_IPV4, "kube-proxy", "localhost-nodeport-rejected-tcp", unix.NFT_OBJECT_COUNTER))
	f.Add([]byte{10, 0, 0, 0, 8, 0, 2, 0, 'a', 0, 0, 0})
	f.Add([]byte{2, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := DecodeObj(netlink.Message{Data: data})
		if err != nil {
			return
		}
		again, err := DecodeObj(netlink.Message{Data: objMessage(t, o.Family, o.Table, o.Name, o.Type)})
		if err != nil || again != o {
			t.Fatalf("object %+v written back decodes to %+v (%v)", o, again, err)
		}
	})
}

func TestDecodeObj(t *testing.T) {
	o, err := DecodeObj(netlink.Message{Data: objMessage(t, unix.NFPROTO_IPV6, "kube-proxy", "localhost-nodeport-rejected-udp", unix.NFT_OBJECT_COUNTER)})
	want := Obj{Family: unix.NFPROTO_IPV6, Table: "kube-proxy", Name: "localhost-nodeport-rejected-udp", Type: unix.NFT_OBJECT_COUNTER}
	if err != nil || o != want {
		t.Fatalf("DecodeObj = %+v, %v; want %+v", o, err, want)
	}
}
