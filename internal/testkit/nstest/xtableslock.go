package nstest

import (
	"fmt"
	"os"
	"path/filepath"
)

// EnvXtablesLock is the variable the legacy iptables tools read for their
// lock file's path (XT_LOCK_NAME, /run/xtables.lock, when unset).
const EnvXtablesLock = "XTABLES_LOCKFILE"

// Every test process that uses this package gets an xtables lock file of
// its own. The default lock is one file for the whole machine although it
// only guards the tables of one network namespace, and `go test ./...`
// runs the netns tests of several packages at once: on a loaded machine
// one package's `iptables-legacy-restore -w 5` gave up behind another's
// ("Can't lock /run/xtables.lock"). A test process here works only in
// namespaces of its own (InNetns refuses the host's), so a per-process
// lock keeps the guarantee the lock gives without the cross-package wait.
// The children InNetns starts inherit it; a value already set is kept.
func init() {
	if os.Getenv(EnvXtablesLock) != "" {
		return
	}
	path := filepath.Join(os.TempDir(), fmt.Sprintf("rke2-proxy-backend-test-xtables-%d.lock", os.Getpid()))
	_ = os.Setenv(EnvXtablesLock, path)
}
