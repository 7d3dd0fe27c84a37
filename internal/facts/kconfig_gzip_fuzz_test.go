package facts

import (
	"bytes"
	"compress/gzip"
	"maps"
	"testing"
)

// FuzzParseGzipConfig: the streaming parse of a compressed config reads
// exactly what the parse of the same text uncompressed reads.
func FuzzParseGzipConfig(f *testing.F) {
	f.Add([]byte("CONFIG_NF_TABLES=y\n# CONFIG_NFT_COMPAT is not set\n"))
	f.Add([]byte("CONFIG_NF_TABLES=m\n# end of IPv6: Netfilter Configuration\nCONFIG_NFT_COMPAT=y\n"))
	f.Add([]byte("garbage\n"))
	f.Add([]byte("# end of IPv6: Netfilter Configuration\nCONFIG_X=y\n"))
	f.Add(append(bytes.Repeat([]byte("#"), maxConfigLine+10), "\nCONFIG_NF_TABLES=y"...))
	f.Fuzz(func(t *testing.T, text []byte) {
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(text)
		zw.Close()
		plain, perr := parseConfigFile("/boot/config-6.1.0", text)
		streamed, serr := parseConfigFile("/proc/config.gz", gz.Bytes())
		if (perr == nil) != (serr == nil) || !maps.Equal(plain, streamed) {
			t.Fatalf("plain %v %v, streamed %v %v", plain, perr, streamed, serr)
		}
	})
}
