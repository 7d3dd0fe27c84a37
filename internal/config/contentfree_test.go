package config

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// A link to /etc/shadow planted as the operator config: the error names
// the file and what is wrong, and quotes nothing of it.
func TestErrorsNeverQuoteAPlantedFile(t *testing.T) {
	h := testhost.New(t).File("/shadow", "root:$6$Zs4lT$HASHVALUE:19700:0:99999:7:::\ndaemon:*:19700:0:99999:7:::\n").
		Symlink(hostfs.ConfigFile, "/shadow")
	_, err := Load(h.Root(), hostfs.ConfigFile, nil, nil)
	if err == nil || !strings.Contains(err.Error(), hostfs.ConfigFile) || !strings.Contains(err.Error(), "not the right file") {
		t.Fatalf("err = %v; want the file named as likely the wrong one", err)
	}
	for _, secret := range []string{"HASHVALUE", "Zs4lT", "root", "daemon"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error quotes the file (%q): %v", secret, err)
		}
	}
}
