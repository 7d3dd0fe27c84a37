package facts

import (
	"strings"
	"testing"
)

func TestParseKernelConfig(t *testing.T) {
	text := `#
# Automatically generated file; DO NOT EDIT.
# Linux/x86 6.1.0 Kernel Configuration
#
CONFIG_CC_VERSION_TEXT="gcc (Debian 12.2.0-14) 12.2.0"
CONFIG_NF_TABLES=m
CONFIG_NF_TABLES_INET=y
# CONFIG_NETFILTER_XTABLES_LEGACY is not set
CONFIG_NFT_COMPAT=n
CONFIG_LOG_BUF_SHIFT=17

  CONFIG_IP_NF_IPTABLES=m
# a free comment mentioning CONFIG_NFT_CT=y
`
	opts, err := ParseKernelConfig(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Tristate{
		"NF_TABLES": Module, "NF_TABLES_INET": Builtin, "NETFILTER_XTABLES_LEGACY": Absent,
		"NFT_COMPAT": Absent, "IP_NF_IPTABLES": Module,
	}
	for k, v := range want {
		if opts[k] != v {
			t.Errorf("%s = %q, want %q", k, opts[k], v)
		}
	}
	for _, k := range []string{"CC_VERSION_TEXT", "LOG_BUF_SHIFT", "NFT_CT"} {
		if _, ok := opts[k]; ok {
			t.Errorf("%s is not a tristate set in the file but was recorded", k)
		}
	}
}

func TestParseKernelConfigRejectsNonConfigs(t *testing.T) {
	for name, text := range map[string]string{
		"empty":         "",
		"only comments": "# hello\n#\n",
		"binary":        "\x1f\x8b\x08\x00garbage",
		"yaml":          "kube-proxy-arg: [x]\n",
	} {
		if _, err := ParseKernelConfig(strings.NewReader(text)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestParseRelease(t *testing.T) {
	for in, want := range map[string][3]int{
		"6.1.0-18-amd64":               {6, 1, 0},
		"4.4.302+":                     {4, 4, 302},
		"5.14.0-427.13.1.el9_4.x86_64": {5, 14, 0},
		"6.17":                         {6, 17, 0},
		"6.18.44-fc-v669":              {6, 18, 44},
	} {
		ma, mi, pa, ok := ParseRelease(in)
		if !ok || [3]int{ma, mi, pa} != want {
			t.Errorf("ParseRelease(%q) = %d.%d.%d %v", in, ma, mi, pa, ok)
		}
	}
	for _, bad := range []string{"", "linux", "6", "v6.1"} {
		if _, _, _, ok := ParseRelease(bad); ok {
			t.Errorf("ParseRelease(%q) ok", bad)
		}
	}
}

func FuzzParseKernelConfig(f *testing.F) {
	f.Add("CONFIG_NF_TABLES=m\n# CONFIG_NFT_COMPAT is not set\n")
	f.Add("CONFIG_X=\"a=b\"\nCONFIG_Y=0x10\n")
	f.Add("# CONFIG_ is not set\nCONFIG_=y\n")
	f.Add("\n\n#\n")
	f.Fuzz(func(t *testing.T, text string) {
		opts, err := ParseKernelConfig(strings.NewReader(text))
		if err != nil {
			if opts != nil {
				t.Fatal("options returned with an error")
			}
			return
		}
		for name, v := range opts {
			if !validOption([]byte(name)) {
				t.Fatalf("invalid option name %q", name)
			}
			if v != Builtin && v != Module && v != Absent {
				t.Fatalf("%s = %q", name, v)
			}
			if !strings.Contains(text, "CONFIG_"+name) {
				t.Fatalf("%s is not in the input", name)
			}
		}
	})
}
