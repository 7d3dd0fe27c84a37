package rke2

import (
	"slices"
	"strconv"
	"strings"
)

// Config keys this project reads or writes (DOMAIN.md section 1).
const (
	KeyKubeProxyArg      = "kube-proxy-arg"
	KeyKubeProxyExtraEnv = "kube-proxy-extra-env"
	KeyDisableKubeProxy  = "disable-kube-proxy" // server only
	KeyNodeLabel         = "node-label"
)

// Strings returns key's value as RKE2 turns it into repeated flags: a list
// as is, a scalar as one item, nil when the key is not set.
func (e Effective) Strings(key string) []string {
	v, ok := e.Values[key]
	if !ok {
		return nil
	}
	if list, ok := v.([]string); ok {
		return append([]string(nil), list...)
	}
	return []string{toText(v)}
}

// Bool returns key's boolean value and whether it is set to something a
// boolean flag accepts. For a list the last item wins, as with repeated flags.
func (e Effective) Bool(key string) (value, ok bool) {
	v, set := e.Values[key]
	if !set {
		return false, false
	}
	if b, isBool := v.(bool); isBool {
		return b, true
	}
	items := e.Strings(key)
	if len(items) == 0 {
		return false, false
	}
	b, err := strconv.ParseBool(strings.TrimSpace(items[len(items)-1]))
	if err != nil {
		return false, false
	}
	return b, true
}

// sources returns the file each item of Strings(key) came from.
func (e Effective) sources(key string) []string {
	if _, isList := e.Values[key].([]string); isList {
		return e.ItemOrigin[key]
	}
	if _, set := e.Values[key]; set {
		return []string{e.Origin[key]}
	}
	return nil
}

// lastSetting finds the last item of key of the form name=value (a leading
// "--" optional when dashes is true) and returns its value and file. Items
// from the skip files are ignored, so a caller can look past its own drop-in.
func (e Effective) lastSetting(key, name string, dashes bool, skip []string) (value, file string) {
	items, from := e.Strings(key), e.sources(key)
	for i := len(items) - 1; i >= 0; i-- {
		src := ""
		if i < len(from) {
			src = from[i]
		}
		if slices.Contains(skip, src) {
			continue
		}
		item := strings.TrimSpace(items[i])
		if dashes {
			item = strings.TrimPrefix(item, "--")
		}
		k, v, found := strings.Cut(item, "=")
		if found && k == name {
			return v, src
		}
	}
	return "", ""
}

// ProxyMode is the last proxy-mode=... in kube-proxy-arg (RKE2 appends user
// args after its default proxy-mode=iptables and the last flag wins), with
// the file that set it; "" when the operator did not set one.
func (e Effective) ProxyMode(skip ...string) (value, file string) {
	return e.lastSetting(KeyKubeProxyArg, "proxy-mode", true, skip)
}

// KubeProxyArg is the last name=... in kube-proxy-arg (kube-proxy keeps the
// last of a repeated flag), with its file; "" when none sets it. ProxyMode
// is this for proxy-mode; ipvs mode reads ipvs-scheduler with it.
func (e Effective) KubeProxyArg(name string, skip ...string) (value, file string) {
	return e.lastSetting(KeyKubeProxyArg, name, true, skip)
}

// IptablesMode is the last IPTABLES_MODE in kube-proxy-extra-env (split at
// the first '=', as RKE2 does), with the file that set it.
func (e Effective) IptablesMode(skip ...string) (value, file string) {
	return e.lastSetting(KeyKubeProxyExtraEnv, "IPTABLES_MODE", false, skip)
}

// DisableKubeProxy reports disable-kube-proxy (server only) and its file.
func (e Effective) DisableKubeProxy() (bool, string) {
	v, ok := e.Bool(KeyDisableKubeProxy)
	if !ok {
		return false, ""
	}
	return v, e.Origin[KeyDisableKubeProxy]
}
