package nl

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// maxRuleSockets bounds the netlink sockets that dump chains at once.
const maxRuleSockets = 4

// ChainRef names one chain whose rules DumpChainRules dumps.
type ChainRef struct {
	Family       byte // NFPROTO_IPV4 or NFPROTO_IPV6
	Table, Chain string
}

// DumpChainRules dumps the rules of each chain, one dump per chain
// (NFTA_RULE_CHAIN) as iptables-nft-save does, rather than one per table:
// the kernel resumes a table-wide rule dump (every 32 KiB chunk) by
// walking all of the table's rules before the resume point, which makes
// it quadratic in a large kube-proxy ruleset's rules, while a chain dump
// starts at its chain (looked up by name) and walks only that chain's
// rules. Chains are independent, so up to one socket per CPU (conn and at
// most maxRuleSockets-1 more) dumps them at once. each gets the index in
// chains of the chain a message belongs to; the messages of one chain
// come in order from one goroutine, those of different chains may come
// concurrently. A changed ruleset (ErrDumpInterrupted) wins over other
// errors, so the caller retries.
func DumpChainRules(conn *Conn, chains []ChainRef, each func(i int, m netlink.Message) error) error {
	// A few chains are not worth another socket.
	workers := max(1, min(runtime.GOMAXPROCS(0), maxRuleSockets, len(chains)/64))
	var (
		next atomic.Int64
		wg   sync.WaitGroup
		errs = make([]error, workers)
	)
	for w := range workers {
		c := conn
		if w > 0 {
			var err error
			if c, err = Dial(); err != nil {
				// The workers that have a socket still dump every chain.
				continue
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if c != conn {
				defer c.Close()
			}
			for {
				i := int(next.Add(1) - 1)
				if i >= len(chains) {
					return
				}
				if err := dumpChain(c, chains[i], func(m netlink.Message) error { return each(i, m) }); err != nil {
					errs[w] = err
					next.Store(int64(len(chains))) // the others stop too
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if errors.Is(err, ErrDumpInterrupted) {
			return err
		}
	}
	return errors.Join(errs...)
}

// dumpChain dumps the rules of one chain.
func dumpChain(c *Conn, ref ChainRef, each func(netlink.Message) error) error {
	req := []netlink.Attribute{
		{Type: unix.NFTA_RULE_TABLE, Data: append([]byte(ref.Table), 0)},
		{Type: unix.NFTA_RULE_CHAIN, Data: append([]byte(ref.Chain), 0)},
	}
	if err := c.Execute(unix.NFT_MSG_GETRULE, netlink.Dump, ref.Family, req, each); err != nil {
		return fmt.Errorf("rules of %s table %s chain %s: %w", FamilyName(ref.Family), ref.Table, ref.Chain, err)
	}
	return nil
}
