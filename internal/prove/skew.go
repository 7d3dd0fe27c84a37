package prove

import (
	"context"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/skew"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// AddNftSkew judges f (facts.VerifyAddOnFacts with ToolVersions and
// AskNft: the distribution's version, the host's nft from dpkg's status
// file or `nft --version`) with, on the real host, the sets carrying user
// data read now, and adds verify.NftSkewFindings' finding or warning to
// res. Call it after verify.Run.
func AddNftSkew(ctx context.Context, root hostfs.Root, f facts.Facts, res *verify.Result) {
	if res == nil || res.Expect != backend.NFTables {
		return
	}
	var notes []string
	if root.IsHost() {
		sets, err := facts.ForeignUserdataSets(ctx)
		if err != nil {
			notes = append(notes, "sets with user data not read (nft version skew judged without them): "+err.Error())
		} else {
			f.LiveRules.UserdataSets, f.LiveRules.UserdataSetsRead = sets, true
		}
	}
	h := facts.SkewHost(f)
	findings, warnings := verify.NftSkewFindings(res.Expect, skew.Judge(skew.Default(), h), h)
	res.Add(findings, warnings, notes...)
}
