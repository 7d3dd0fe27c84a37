package config

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

func TestCNIHelmChartConfig(t *testing.T) {
	c, err := Load(rootWith(t, nil), hostfs.ConfigFile, []string{"RKE2_PROXY_BACKEND_CNI_HELMCHARTCONFIG=write"}, nil)
	if err != nil || c.CNI.HelmChartConfig != CNIWrite {
		t.Fatalf("from the environment: %+v, err %v", c.CNI, err)
	}
	_, err = Load(rootWith(t, ptr("cni:\n  helmchartconfig: apply\n")), hostfs.ConfigFile, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "cni.helmchartconfig") || !strings.Contains(err.Error(), `"apply" is not valid: use print`) {
		t.Errorf("a bad value: err %v", err)
	}
	_, err = Load(rootWith(t, ptr("cni:\n  write: true\n")), hostfs.ConfigFile, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "helmchartconfig") {
		t.Errorf("an unknown key: err %v", err)
	}
}
