package examples

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// crd is the part of a CustomResourceDefinition that says what a valid
// object is.
type crd struct {
	Spec struct {
		Group string `yaml:"group"`
		Names struct {
			Kind string `yaml:"kind"`
		} `yaml:"names"`
		Versions []struct {
			Name   string `yaml:"name"`
			Served bool   `yaml:"served"`
			Schema struct {
				OpenAPIV3Schema *schema `yaml:"openAPIV3Schema"`
			} `yaml:"schema"`
		} `yaml:"versions"`
	} `yaml:"spec"`
}

// planSchema reads SUC's Plan CRD (see testdata/SOURCE for its upstream
// path and commit) and returns its served versions' schemas by apiVersion.
func planSchema(t *testing.T) (kind string, byAPIVersion map[string]*schema) {
	t.Helper()
	data, err := os.ReadFile("testdata/upgrade.cattle.io_plans.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c crd
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatalf("testdata/upgrade.cattle.io_plans.yaml: %v", err)
	}
	byAPIVersion = map[string]*schema{}
	for _, v := range c.Spec.Versions {
		if v.Served && v.Schema.OpenAPIV3Schema != nil {
			byAPIVersion[c.Spec.Group+"/"+v.Name] = v.Schema.OpenAPIV3Schema
		}
	}
	if len(byAPIVersion) == 0 || c.Spec.Names.Kind == "" {
		t.Fatal("the CRD has no served version with a schema")
	}
	return c.Spec.Names.Kind, byAPIVersion
}

// validate checks one manifest against the Plan CRD: its kind and
// apiVersion, then its spec against the schema (metadata is the API
// server's ObjectMeta, not the CRD's).
func validate(t *testing.T, doc map[string]any) []string {
	kind, schemas := planSchema(t)
	if doc["kind"] != kind {
		return []string{"kind is " + toString(doc["kind"]) + ", want " + kind}
	}
	s := schemas[toString(doc["apiVersion"])]
	if s == nil {
		return []string{"apiVersion " + toString(doc["apiVersion"]) + " is not served by the CRD"}
	}
	if _, ok := doc["spec"]; !ok {
		return []string{"spec is missing"}
	}
	return check(s.Properties["spec"], doc["spec"], "spec")
}

func toString(v any) string { s, _ := v.(string); return s }

func readPlan(t *testing.T) map[string]any { return readYAML(t, "suc-switch-plan.yaml") }

func TestSUCPlanMatchesTheCRD(t *testing.T) {
	doc := readPlan(t)
	for _, p := range validate(t, doc) {
		t.Error("suc-switch-plan.yaml: " + p)
	}
	spec := doc["spec"].(map[string]any)
	// What the rolling switch relies on, beyond the schema.
	if spec["concurrency"] != 1 || spec["cordon"] != true || spec["drain"] == nil || spec["nodeSelector"] == nil {
		t.Errorf("the plan must take one cordoned, drained node of a selected pool at a time: %v", spec)
	}
	up := spec["upgrade"].(map[string]any)
	cmd, _ := up["command"].([]any)
	if len(cmd) != 2 || cmd[0] != "chroot" || cmd[1] != "/host" {
		t.Errorf("upgrade.command is %v, want [chroot /host] (SUC mounts the host at /host)", cmd)
	}
	args, _ := up["args"].([]any)
	if !strings.Contains(toString(args[len(args)-1]), "rke2-proxy-backend switch --to \"$SYSTEM_UPGRADE_PLAN_LATEST_VERSION\"") {
		t.Errorf("upgrade.args %v do not run switch to the plan's version", args)
	}
	// The dry run refuses a node that cannot take the switch (an ipvs
	// node whose RKE2 config still sets proxy-mode=ipvs) before SUC
	// cordons and drains it, and prints the ipvs translation report.
	prep, _ := spec["prepare"].(map[string]any)
	pargs, _ := prep["args"].([]any)
	if len(pargs) == 0 || !strings.Contains(toString(pargs[len(pargs)-1]), "rke2-proxy-backend switch --to \"$SYSTEM_UPGRADE_PLAN_LATEST_VERSION\" --dry-run") {
		t.Errorf("prepare %v does not dry-run the switch before the drain", prep)
	}
}

// The walker catches what a broken example would get wrong, so a pass
// above means something.
func TestSUCPlanCheckCatchesMistakes(t *testing.T) {
	cases := map[string]struct {
		edit func(spec map[string]any)
		want string
	}{
		"unknown field":     {func(s map[string]any) { s["concurency"] = 1 }, "spec.concurency: no such field"},
		"wrong type":        {func(s map[string]any) { s["concurrency"] = "1" }, "spec.concurrency: string 1, want an integer"},
		"required missing":  {func(s map[string]any) { delete(s["upgrade"].(map[string]any), "image") }, "spec.upgrade.image: required, missing"},
		"nested unknown":    {func(s map[string]any) { s["drain"].(map[string]any)["ignoreDaemonsets"] = true }, "spec.drain.ignoreDaemonsets: no such field"},
		"list item type":    {func(s map[string]any) { s["upgrade"].(map[string]any)["args"] = []any{"sh", 1} }, "spec.upgrade.args[1]: int 1, want a string"},
		"int-or-string bad": {func(s map[string]any) { s["drain"].(map[string]any)["timeout"] = true }, "spec.drain.timeout: bool true is neither"},
		"no upgrade":        {func(s map[string]any) { delete(s, "upgrade") }, "spec.upgrade: required, missing"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			doc := readPlan(t)
			c.edit(doc["spec"].(map[string]any))
			got := strings.Join(validate(t, doc), "\n")
			if !strings.Contains(got, c.want) {
				t.Errorf("problems:\n%s\nwant one containing %q", got, c.want)
			}
		})
	}
	doc := readPlan(t)
	doc["apiVersion"] = "upgrade.cattle.io/v2"
	if p := validate(t, doc); len(p) == 0 {
		t.Error("an apiVersion the CRD does not serve passed")
	}
}

// What the install Plan relies on beyond the schema: nothing restarts, so
// no cordon or drain; the node's part runs in chroot /host with the
// repository's files from the Secret SUC mounts; the package (or the
// tarball) is installed at the plan's version, then adopt and verify run;
// both shell parts parse.
func TestSUCInstallPlan(t *testing.T) {
	doc := readYAML(t, "suc-install-plan.yaml")
	for _, p := range validate(t, doc) {
		t.Error("suc-install-plan.yaml: " + p)
	}
	spec := doc["spec"].(map[string]any)
	if spec["cordon"] != false || spec["drain"] != nil {
		t.Errorf("installing restarts nothing: the plan must neither cordon nor drain (cordon %v, drain %v)", spec["cordon"], spec["drain"])
	}
	secrets, _ := spec["secrets"].([]any)
	if len(secrets) != 1 || secrets[0].(map[string]any)["path"] != "/run/system-upgrade/secrets/rke2-proxy-backend-repo" {
		t.Errorf("secrets %v: want rke2-proxy-backend-repo mounted where the script reads it", secrets)
	}
	up := spec["upgrade"].(map[string]any)
	script := toString(up["args"].([]any)[0])
	node, _, ok := strings.Cut(script, "\nNODE\n")
	_, node, ok2 := strings.Cut(node, "<<'NODE'\n")
	if !ok || !ok2 {
		t.Fatalf("no node part (a <<'NODE' here-document) in the upgrade script:\n%s", script)
	}
	for _, want := range []string{
		`chroot /host /bin/sh "$work/node.sh" "$SYSTEM_UPGRADE_PLAN_LATEST_VERSION" "$work/repo"`,
		"cp -L /run/system-upgrade/secrets/rke2-proxy-backend-repo/* ",
	} {
		if !strings.Contains(script, want) {
			t.Errorf("the upgrade script lacks %q", want)
		}
	}
	for _, want := range []string{
		`"rke2-proxy-backend=$v-1" </dev/null`, `dnf -y install "rke2-proxy-backend-$v-1" </dev/null`,
		`sha256sum -c "$name.tar.gz.sha256"`, `sh "$dir/$name/install.sh"`,
		"rke2-proxy-backend adopt --wait=60s", "rke2-proxy-backend verify --wait=2m",
	} {
		if !strings.Contains(node, want) {
			t.Errorf("the node part lacks %q", want)
		}
	}
	for what, text := range map[string]string{"upgrade script": script, "node part": node} {
		if out, err := exec.Command("sh", "-n", "-c", text).CombinedOutput(); err != nil {
			t.Errorf("the %s does not parse: %v\n%s", what, err, out)
		}
	}
}
