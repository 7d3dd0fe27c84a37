package nfdfeatures

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostplan"
)

// Publish writes the feature file of what features returns under root,
// valid for ttl from now. A host without NFD's directory gets nothing, and
// features is not even asked (it probes the host): nfd-worker creates the
// directory when it mounts it, and one of our own would only confuse. A file that
// cannot be written is removed, so NFD never keeps labels older than the
// last run; the error says both.
func Publish(root hostfs.Root, features func() Features, now time.Time, ttl time.Duration) error {
	dir := hostfs.NFDFeaturesDir
	if fi, err := root.Stat(dir); err != nil || !fi.IsDir() {
		return nil
	}
	data, err := Render(features(), now.Add(ttl))
	if err == nil {
		if _, err = root.WriteFileAtomic(hostfs.NFDFeatureFile, data, 0o644); err == nil {
			return nil
		}
	}
	err = fmt.Errorf("write the node-feature-discovery labels %s: %w", root.Path(hostfs.NFDFeatureFile), err)
	return errors.Join(err, Remove(root))
}

// Remove deletes the feature file, if there is one: the run that would
// have renewed it has no result, or the operator turned it off.
func Remove(root hostfs.Root) error {
	if err := root.RemoveFile(hostfs.NFDFeatureFile); err != nil {
		return fmt.Errorf("the previous node-feature-discovery labels: %w", err)
	}
	return nil
}

// Kernel fills f's kernel capabilities from c, what the facts do not rule
// out (hostplan.ProbeCapable): legacy xtables is iptables-legacy runnable,
// nf_tables usable is iptables-nft runnable, nftables mode is nftables
// runnable by the kernel (RKE2's release and the CNI are the cluster's
// side, which detect and verify judge).
func (f *Features) Kernel(c hostplan.Capable) {
	f.LegacyXtables = slices.Contains(c.Runnable, backend.IptablesLegacy)
	f.NFTables = slices.Contains(c.Runnable, backend.IptablesNFT)
	f.NFTablesMode = slices.Contains(c.Runnable, backend.NFTables)
}
