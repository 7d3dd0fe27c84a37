package facts

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

const manifests = "/var/lib/rancher/rke2/server/manifests"

// helmChartConfig is a HelmChartConfig for chart in kube-system, in block
// style, with values (YAML) as its valuesContent.
func helmChartConfig(chart, values string) string {
	var b strings.Builder
	b.WriteString("apiVersion: helm.cattle.io/v1\nkind: HelmChartConfig\nmetadata:\n  name: " + chart +
		"\n  namespace: kube-system\nspec:\n  valuesContent: |-\n")
	for _, line := range strings.SplitAfter(strings.TrimSuffix(values, "\n"), "\n") {
		b.WriteString("    " + line)
	}
	return b.String() + "\n"
}

func canalConfig(iface string) string {
	return "apiVersion: helm.cattle.io/v1\nkind: HelmChartConfig\nmetadata: {name: rke2-canal, namespace: kube-system}\nspec:\n  valuesContent: |-\n    flannel:\n      iface: " + iface + "\n"
}

// chartFiles probes h and returns the files its HelmChartConfigs came
// from, in order, and what could not be read.
func chartFiles(t *testing.T, h *testhost.Host) ([]string, string) {
	t.Helper()
	f := Probe(h.Root(), Options{})
	var files []string
	for _, c := range f.RKE2.CNI.Charts {
		files = append(files, strings.TrimPrefix(c.File, manifests+"/"))
	}
	return files, strings.Join(f.Unreadable, "\n")
}

// The files RKE2's deploy controller applies (k3s pkg/deploy): .yaml,
// .yml and .json in any case, at any depth, dot-directories included,
// sorted by path; not dot-files, not a name some NAME.skip parks (in any
// directory), not other extensions.
func TestManifestsAsTheDeployControllerReadsThem(t *testing.T) {
	h := testhost.New(t).
		File(manifests+"/a.json", `{"apiVersion":"helm.cattle.io/v1","kind":"HelmChartConfig","metadata":{"name":"rke2-canal"},"spec":{"valuesContent":"flannel: {iface: eth1}"}}`).
		File(manifests+"/a/deep/er/b.YML", canalConfig("b")).
		File(manifests+"/.hidden/c.yaml", canalConfig("c")).
		File(manifests+"/.d.yaml", canalConfig("d")).
		File(manifests+"/e.yaml.txt", canalConfig("e")).
		File(manifests+"/team/f.yaml", canalConfig("f")).
		File(manifests+"/f.yaml.skip", "").
		File(manifests+"/g.yml", canalConfig("g"))
	files, unreadable := chartFiles(t, h)
	// sorted by whole path as the controller does: "." < "/" < letters
	want := []string{".hidden/c.yaml", "a.json", "a/deep/er/b.YML", "g.yml"}
	if fmt.Sprint(files) != fmt.Sprint(want) || unreadable != "" {
		t.Errorf("charts from %q (unreadable %q), want %q", files, unreadable, want)
	}
}

// Symlinks as the deploy controller takes them: a linked file is read
// through the link, a linked directory is walked, a directory link inside
// a linked directory is not (no loops), and every read stays in the root.
func TestManifestSymlinks(t *testing.T) {
	h := testhost.New(t).
		File("/srv/ops/canal.yaml", canalConfig("linkedfile")).
		File("/srv/opsdir/x.yaml", canalConfig("linkeddir")).
		Symlink("/srv/opsdir/loop", manifests).
		Symlink("/srv/opsdir/back", "/srv/ops").
		Symlink(manifests+"/canal.yaml", "/srv/ops/canal.yaml").
		Symlink(manifests+"/ops", "/srv/opsdir").
		Symlink(manifests+"/self", ".").
		Symlink(manifests+"/gone.yaml", "/srv/nowhere.yaml").
		Symlink(manifests+"/gone.txt", "/srv/nowhere.txt").
		Symlink(manifests+"/out.yaml", "../../../../../../../../etc/outside.yaml")
	files, unreadable := chartFiles(t, h)
	want := []string{"canal.yaml", "ops/x.yaml", "self/canal.yaml"}
	if fmt.Sprint(files) != fmt.Sprint(want) {
		t.Errorf("charts from %q, want %q", files, want)
	}
	if !strings.Contains(unreadable, manifests+"/gone.yaml: a symlink whose target cannot be read") || strings.Contains(unreadable, "gone.txt") {
		t.Errorf("unreadable %q; want gone.yaml named, gone.txt not", unreadable)
	}
	if strings.Contains(unreadable, "out.yaml") == false {
		t.Errorf("unreadable %q; the link out of the root resolves inside it, to nothing, and is named", unreadable)
	}
}

// The bounds: depth, entries, and the regular-files-only read.
func TestManifestBounds(t *testing.T) {
	deep := manifests
	for i := 0; i <= maxManifestDepth; i++ {
		deep += fmt.Sprintf("/l%d", i)
	}
	h := testhost.New(t).File(deep+"/z.yaml", canalConfig("deep")).FIFO(manifests + "/fifo.yaml")
	files, unreadable := chartFiles(t, h)
	if len(files) != 0 || !strings.Contains(unreadable, fmt.Sprintf("more than %d directory levels below %s", maxManifestDepth, manifests)) {
		t.Errorf("charts %q, unreadable %q; want the deep file not read and said", files, unreadable)
	}
	if !strings.Contains(unreadable, manifests+"/fifo.yaml: not a regular file but a named pipe (FIFO)") {
		t.Errorf("unreadable %q; want the FIFO refused by name", unreadable)
	}

	h = testhost.New(t)
	for i := 0; i < maxManifestEntries; i++ {
		h.File(fmt.Sprintf("%s/d%d/n%05d.txt", manifests, i%4, i), "")
	}
	h.File(manifests+"/d9/zz.yaml", canalConfig("late"))
	files, unreadable = chartFiles(t, h)
	if len(files) != 0 || !strings.Contains(unreadable, fmt.Sprintf("%s: more than %d entries", manifests, maxManifestEntries)) {
		t.Errorf("charts %q, unreadable %q; want the walk bounded and said", files, unreadable)
	}
}
